"""The helpers of the foreign probe's whole-call rules (:mod:`.job_foreign`), as source pasted into
every generated test module after :data:`.values.NORMALISE_SOURCE`'s own: ``_swe_abs_spoil``
empties what a call returned (rule ``fresh_result``), ``_swe_abs_settings`` reads the
interpreter-wide settings a library has no business changing (rule ``settings``). They read
``_SWE_ABS_MUTABLE`` and ``_swe_abs_collections`` from the source before them."""

WHOLE_CALL_SOURCE = '''

_SWE_ABS_SPOILED = []


def _swe_abs_spoil(value):
    """Empty, in place, what a call returned where it is a mutable container, and the mutable
    containers among a returned list's, tuple's or dict's items: a second call that hands back
    the first one's object, or shares one of its containers (a memoised result), returns what
    was emptied. Appends to ``_SWE_ABS_SPOILED`` whether anything was emptied."""
    emptied = False
    if isinstance(value, dict):
        items = list(value.values())
    elif isinstance(value, (list, tuple, _swe_abs_collections.deque)):
        items = list(value)
    else:
        items = []
    for item in items + [value]:
        if isinstance(item, _SWE_ABS_MUTABLE) and len(item):
            item.clear()
            emptied = True
    _SWE_ABS_SPOILED.append(emptied)
    return emptied


def _swe_abs_settings():
    """Interpreter-wide settings a library has no business changing, as they stand: the
    integer-text digit limit (CVE-2020-10735), the thread switch interval, the default socket
    timeout, the decimal context, the locale, the garbage collector and the csv field limit."""
    import csv, decimal, gc, locale, socket, sys
    context = decimal.getcontext()
    return {
        "int_max_str_digits": sys.get_int_max_str_digits(),
        "switch_interval": sys.getswitchinterval(),
        "socket_timeout": socket.getdefaulttimeout(),
        "decimal": (context.prec, context.rounding, context.Emin, context.Emax,
                    context.capitals, context.clamp),
        "locale": locale.setlocale(locale.LC_ALL),
        "gc_enabled": gc.isenabled(),
        "csv_field_size_limit": csv.field_size_limit(),
    }
'''
