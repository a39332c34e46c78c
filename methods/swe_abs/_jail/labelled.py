"""A text whose ``str()`` is not its value, as source pasted into every generated test module
after :data:`.values.NORMALISE_SOURCE`'s own: ``_SweAbsLabelled`` is a ``str`` subclass whose
``__str__``, ``__format__`` and ``__repr__`` give a label, the way a member of an enumeration
mixed with ``str`` does (``class Color(str, Enum)``: ``str(Color.RED) == 'Color.RED'`` where its
value is ``'red'``, the usual way to declare string constants). A function that reads the text as
a text (``encode``, slicing, ``re``) reads its value; one that asks ``str()`` for it reads the
label. The foreign probe passes it as the foreign kind ``labelled`` (:mod:`.foreign`)."""

LABELLED_SOURCE = '''

class _SweAbsLabelled(str):
    """A text whose ``str()`` and ``format()`` give ``_SweAbsLabelled.<value>``, not its value."""

    def __str__(self):
        return "_SweAbsLabelled." + str.__str__(self)

    def __format__(self, spec):
        return format(str(self), spec)

    def __repr__(self):
        return f"_SweAbsLabelled({str.__str__(self)!r})"
'''
