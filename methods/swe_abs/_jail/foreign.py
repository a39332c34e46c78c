"""Foreign inputs: a value outside the declared domain put in place of one argument of the call
to the function under test (None, the other of str/bytes, a bytearray, a number as text, a text
as a ``UserString`` or as a path-like object, an integer that is no ``int`` (NumPy's, say), a
flag as the integer 1 or 0, a scalar in a list, a sequence whose iteration fails at once, after
its first item or at its end (with the probe's own error and with a ``RuntimeError``: the class a
fix catches beside ``StopIteration``), a value without behaviour (equal to its kind alone,
failing when called) and one whose truth value cannot be read, in place of anything not callable,
a text, bytes or number as an instance of an unhashable subclass of its type and a text whose
``str()`` is a label (and a sequence whose items are such instances, or whose integers are no
``int``; the call's first positional argument only), a sequence as a one-shot iterator, as an
object read by index alone or as a mapping whose keys are its items, a container with an
unhashable first item, a callable that fails, always or on its first call only), and where the
reference's outcome on such an input comes from.

An outcome is worth pinning when a correct fix must keep it:

- ``explicit``: the function under test raised it itself, by a ``raise`` statement in a target
  file (validation the reference does on purpose, the fix's own included);
- ``propagated``: the caller's own failure (a failing iterable or callable passed in) came
  through, in the reference and in the tree before the fix alike;
- ``raised_before``: a failed operation (``inside`` a target file or ``outside`` them), where the
  tree before the fix failed too, no other argument is empty or zero and the foreign value is
  not ``None`` for an integer (:mod:`.job_foreign` says why): pinned as *some* exception.
  Pinning its type, where the tree before the fix failed alike, rejected 3 of the first outside
  set's 31 correct re-implementations (they fail differently on ``None`` or a non-sequence);
  pinning only its family (``ValueError`` apart from ``TypeError``) rejected 3 in a trial of the
  fifteenth round (``islice`` raises ``ValueError`` for a text where ``[it] * n`` raises
  ``TypeError``; a fix that reads a failing source first raises the caller's error); a fix that
  returns there instead turns a failure the issue never asked to change into a value;
- ``read_alike``: the declared value's content in another form (:data:`READ_ALIKE_KINDS`), on
  which the reference returns what it returns on the declared value, and the tree before the fix
  either returned that too or read it as it read the declared value (where the fix changed the
  declared outcome: a fix that applies its change to the declared type alone differs);
- ``unchanged``: a value without behaviour (:data:`UNCHANGED_KINDS`), on which the reference
  returns what the tree before the fix returned: the fix left that input alone, and a fix
  that calls it (a default taken for a factory) or treats it apart differs there.

Anything else is not pinned: on an input the function never documented, a correct fix may do
otherwise. Nothing here depends on any instance."""

from __future__ import annotations

import ast
import copy
import dis
import inspect
import os
import types
from typing import Any, Literal

from .calls import position
from .values import HELPERS, UNHASHABLE, equal, expression

Site = Literal["explicit", "propagated", "inside", "outside"]
READ_ALIKE_KINDS = frozenset(
    {"iterator", "sequence", "text", "mapping", "flag_1", "flag_0", "index", "index_items",
     "unhashable", "unhashable_items", "labelled"}
)  # fmt: skip
"""The foreign kinds that carry the declared value's content (its items read once, by index alone
or as a mapping's keys, a number or bytes as text, a flag as 1 or 0, an integer, or a sequence's
integers, as integers that are no ``int``, a value or a sequence's items as instances of
unhashable subclasses of their types, a text whose ``str()`` is a label, not its value, as an
enumeration member mixed with ``str`` has (:mod:`.labelled`; the subject only)): where gold
returns on them what it returns on the declared value, and so did the tree before the fix, the
function reads them alike and a fix must keep it (rule ``read_alike``). A one-shot iterator is
counted (:func:`.calls.counted_call`): how far the call reads it ahead is pinned too. A
``UserString`` is not among them: read alike, it rejected five correct patches in a trial on the
seen sets (four a ``dasherize`` that returns ``str`` where gold keeps the ``UserString``, one a
check of the text's type where gold compares it); gold's explicit rejection of one is still
pinned."""
UNCHANGED_KINDS = frozenset({"opaque", "no_truth", "none_item", "none_items", "none"})
"""The foreign kinds without behaviour of their own (a value that only equals its kind; one
whose ``bool()`` fails, as numpy arrays' and ``pandas.NA``'s does), and ``None`` itself or data
holding it (``none_item``, and ``none_items`` with every item so: where a fix may take ``None``
for "missing", ``next(it, None)`` or ``d.get(k) is None``, or reject a falsy argument it was
never asked to check): where gold returns on them what the tree before the fix returned, a fix
must keep it (rule ``unchanged``)."""
_RAISE_OPS = frozenset({"RAISE_VARARGS"})
_BOOM = HELPERS["_SweAbsBoom"]
_FAILING_ITERABLE = HELPERS["_SweAbsFailingIterable"]
_FAILING_CALLABLE = HELPERS["_SweAbsFailingCallable"]
_SEQUENCE = HELPERS["_SweAbsSequence"]
_INDEX = HELPERS["_SweAbsIndex"]
_OPAQUE = HELPERS["_SweAbsOpaque"]
_PATH = HELPERS["_SweAbsPath"]
_NO_TRUTH = HELPERS["_SweAbsNoTruth"]
_LABELLED = HELPERS["_SweAbsLabelled"]
# Errors a source iterable raises besides the probe's own class: a fix that catches one of them
# around its reading (beside StopIteration) swallows the caller's failure.
_SOURCE_ERRORS = (RuntimeError,)
_CALLER_OWN = (_FAILING_ITERABLE.__name__, _FAILING_CALLABLE.__name__)
_LOOKUP_ERRORS = (TypeError, KeyError, IndexError, AttributeError, ValueError)


def _callee_file(func: Any) -> str | None:
    """The file that defines the code a call of ``func`` runs (a class: its ``__init__``)."""
    if inspect.isclass(func):
        func = func.__dict__.get("__init__") or getattr(func, "__init__", None)
    func = inspect.unwrap(func) if callable(func) else func
    code = getattr(func, "__code__", None)
    return os.path.abspath(code.co_filename) if isinstance(code, types.CodeType) else None


def target_calls(
    tree: ast.Expression, namespace: dict[str, Any], targets: set[str]
) -> list[ast.Call]:
    """The calls in ``tree`` whose callee (evaluated in the set-up's namespace) is defined in a
    target file, outermost first."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        try:
            func = eval(compile(ast.Expression(node.func), "<callee>", "eval"), dict(namespace))  # noqa: S307
        except Exception:  # noqa: BLE001 - a callee bound per example: not a target we can name
            continue
        if _callee_file(func) in targets:
            out.append(node)
    return out


REACH = "_swe_abs_reach"
"""The name :func:`marked` wraps each target call's callee in: ``REACH(i, callee)`` returns the
callee and records that call ``i`` was reached."""


def marked(tree: ast.Expression, calls: list[ast.Call]) -> str:
    """The text of ``tree`` with the callee of each of ``calls`` wrapped as ``REACH(i, callee)``:
    evaluated once on an example, it tells which calls the example reaches (an argument of a call
    in the branch a conditional does not take is never read: replacing it tests nothing)."""
    where = {position(c): i for i, c in enumerate(calls)}

    class _Mark(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 - ast's visitor name
            i = where.get(position(node))
            self.generic_visit(node)
            if i is not None:
                node.func = ast.Call(ast.Name(REACH, ast.Load()), [ast.Constant(i), node.func], [])
            return node

    return ast.unparse(ast.fix_missing_locations(_Mark().visit(copy.deepcopy(tree))))


def argument_slots(call: ast.Call) -> list[tuple[str, ast.expr]]:
    """(label, expression) of each argument that can be replaced: positionals by index, keywords
    by name (``*args`` and ``**kwargs`` are left as they are)."""
    slots: list[tuple[str, ast.expr]] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            break  # positions after a starred argument depend on the example
        slots.append((f"arg{i}", arg))
    slots += [(f"kw:{k.arg}", k.value) for k in call.keywords if k.arg is not None]
    return slots


def replacements(value: Any, subject: bool = True) -> list[tuple[str, str]]:
    """(kind, code) of the foreign values put in place of an argument whose value is ``value``;
    only those with an expression as test code. The unhashable kinds only for the call's
    ``subject`` (its first positional argument, the value the function works on): an option
    (``algorithm='legacy'``) is looked up in a table by a correct fix as often as not (a shipped
    correct slugify patch tests it with ``in`` a set)."""
    if isinstance(value, bool):  # a flag: its other value is in the declared domain already
        return [(f"flag_{int(value)}", repr(int(value)))]  # a kind each: both get tests
    out: list[tuple[str, str | None]] = [] if value is None else [("none", "None")]
    if isinstance(value, str):
        out += [("bytes", expression(value.encode("utf-8"))), ("in_list", _in_list(value)),
                ("userstring", f"_swe_abs_collections.UserString({value!r})"),
                ("pathlike", expression(_PATH(value)))]  # fmt: skip
    elif isinstance(value, bytes):
        out += [("text", expression(value.decode("latin-1"))),
                ("bytearray", expression(bytearray(value)))]  # fmt: skip
    elif isinstance(value, int | float):
        out += [("text", repr(str(value))), ("in_list", _in_list(value))]
        if type(value) is int:  # every operation of int; only a check of the type tells
            out.append(("index", expression(_INDEX(value))))
    elif isinstance(value, list | tuple):
        out += _failing_sources(value)
        inner = expression(value) if len(value) > 1 else None
        if inner is not None:  # the same items, readable once (two or more: a second pass shows)
            out.append(("iterator", f"iter({inner})"))
        out.append(("mapping", _as_keys(value)))
        # the same items behind ``__getitem__`` alone: what ``for`` reads, not ``len``
        out.append(("sequence", expression(_SEQUENCE(value)) if value else None))
        if value:
            wrapped = [[value[0]], *value[1:]]
            out.append(("unhashable_item", expression(type(value)(wrapped))))
        if subject:
            out.append(("unhashable_items", _unhashable_items(value)))
            out.append(("index_items", _index_items(value)))
        out.append(("none_item", _none_item(value)))
        out.append(("none_items", _none_items(value)))
    elif isinstance(value, dict):
        out.append(("none_item", _none_item(value)))
        out.append(("none_items", _none_items(value)))
    elif callable(value) and not inspect.isclass(value):
        out.append(("failing_callable", expression(_FAILING_CALLABLE(_BOOM))))
        out.append(("failing_callable_typeerror", expression(_FAILING_CALLABLE(TypeError))))
        # failing once with an error code catches around its own lookups (EAFP): a fix that
        # catches it around the caller's callable too, and calls again, swallows the caller's
        out += [(f"failing_once_{error.__name__.lower()}",
                 expression(_FAILING_CALLABLE(error, once=True))) for error in _LOOKUP_ERRORS]  # fmt: skip
    elif inspect.isclass(value):
        out.append(("failing_callable", expression(_FAILING_CALLABLE(_BOOM))))
    if subject and type(value) in UNHASHABLE:  # the same value, which a cache cannot hold
        out.append(("unhashable", expression(UNHASHABLE[type(value)](value))))
    if subject and type(value) is str:  # the same text, whose str() is a label (an enum member)
        out.append(("labelled", expression(_LABELLED(value))))
    if value is not None and not callable(value):
        out.append(("opaque", expression(_OPAQUE())))
        out.append(("no_truth", expression(_NO_TRUTH())))
    return [(kind, code) for kind, code in out if code is not None]


def _failing_sources(value: list[Any] | tuple[Any, ...]) -> list[tuple[str, str | None]]:
    """The items of ``value`` from an iterable that fails, with the probe's own error and with
    each of :data:`_SOURCE_ERRORS`: at once, after its first item (two or more items: mid-way,
    not only at the end) and at its end (kinds ``failing_at_once``, ``failing_early``,
    ``failing_iterable``, the error's name after them but for the probe's own)."""
    out: list[tuple[str, str | None]] = []
    for error in (_BOOM, *_SOURCE_ERRORS):
        suffix = "" if error is _BOOM else f"_{error.__name__.lower()}"
        out.append((f"failing_at_once{suffix}", expression(_FAILING_ITERABLE([], error))))
        if len(value) > 1:
            out.append((f"failing_early{suffix}", expression(_FAILING_ITERABLE(value[:1], error))))
        if value:
            out.append((f"failing_iterable{suffix}", expression(_FAILING_ITERABLE(value, error))))
    return out


def _none_item(items: list[Any] | tuple[Any, ...] | dict[Any, Any]) -> str | None:
    """``items`` with its first item (a dict: its first value) ``None``, or, where that item is
    a non-empty list, tuple or dict, that container's first item so (rows of a table, records);
    None where that item is ``None`` already or there is none."""
    new = _first_nulled(items)
    return None if new is None else expression(new)


def _first_nulled(items: Any) -> Any:
    """:func:`_none_item`'s value (None: nothing to replace)."""
    if not items:
        return None
    key = next(iter(items)) if isinstance(items, dict) else 0
    first = items[key]
    if first is None:
        return None
    replacement = None
    if isinstance(first, list | tuple | dict) and first:
        replacement = _first_nulled(first)
        if replacement is None:
            return None
    if isinstance(items, dict):
        return {**items, key: replacement}
    return type(items)([replacement, *items[1:]])


def _none_items(items: list[Any] | tuple[Any, ...] | dict[Any, Any]) -> str | None:
    """``items`` with every item (a dict: every value) ``None``, and in the rows among them (a
    non-empty list, tuple or dict) every item so; None where nothing changes."""

    def _nulled(value: Any, depth: int) -> Any:
        if isinstance(value, list | tuple | dict) and not value:
            return value  # an empty row stays one
        if depth < 2 and isinstance(value, dict):
            return {k: _nulled(v, depth + 1) for k, v in value.items()}
        if depth < 2 and isinstance(value, list | tuple):
            return type(value)(_nulled(v, depth + 1) for v in value)
        return None

    new = _nulled(items, 0)
    return None if new is None or equal(new, items) else expression(new)


def _unhashable_items(items: list[Any] | tuple[Any, ...]) -> str | None:
    """``items`` with each item of a type in :data:`.values.UNHASHABLE` as the same value of
    its unhashable subclass (None when no item is of such a type)."""
    if not any(type(v) in UNHASHABLE for v in items):
        return None
    return expression(type(items)(
        UNHASHABLE[type(v)](v) if type(v) in UNHASHABLE else v for v in items
    ))  # fmt: skip


def _index_items(items: list[Any] | tuple[Any, ...]) -> str | None:
    """``items`` with each ``int`` item as an integer that is no ``int`` (None when none is an
    ``int``): the column numbers or positions a caller takes from numpy, read by indexing."""
    if not any(type(v) is int for v in items):
        return None
    return expression(type(items)(_INDEX(v) if type(v) is int else v for v in items))


def _as_keys(items: list[Any] | tuple[Any, ...]) -> str | None:
    """A dict whose keys are ``items`` in order (None unless they are distinct and hashable)."""
    try:
        if len(set(items)) != len(items):
            return None
    except TypeError:
        return None
    inner = expression(list(items))
    return None if inner is None else f"dict.fromkeys({inner})"


def _in_list(value: Any) -> str | None:
    inner = expression(value)
    return None if inner is None else f"[{inner}]"


def replaced(tree: ast.Expression, call: ast.Call, slot: str, code: str) -> str:
    """The text of ``tree`` with argument ``slot`` of ``call`` replaced by ``code``."""
    new = ast.parse(code, mode="eval").body

    class _Swap(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:  # noqa: N802 - ast's visitor name
            self.generic_visit(node)
            if position(node) != position(call):
                return node
            if slot.startswith("arg"):
                args = list(node.args)
                args[int(slot[3:])] = new
                return ast.Call(node.func, args, node.keywords)
            name = slot[3:]
            keywords = [ast.keyword(k.arg, new) if k.arg == name else k for k in node.keywords]
            return ast.Call(node.func, node.args, keywords)

    return ast.unparse(ast.fix_missing_locations(_Swap().visit(copy.deepcopy(tree))))


def rejection_site(exc: BaseException, targets: set[str]) -> Site:
    """Where ``exc`` came from: the caller's own failing iterable or callable (``propagated``), a
    ``raise`` statement in a target file (``explicit``), another error whose innermost frame is
    in a target file (``inside``), or elsewhere (``outside``)."""
    tb = exc.__traceback__
    if tb is None:
        return "outside"
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    if code.co_qualname.startswith(_CALLER_OWN):
        return "propagated"
    if os.path.abspath(code.co_filename) not in targets:
        return "outside"
    for ins in dis.get_instructions(code):
        if ins.offset == tb.tb_lasti:
            return "explicit" if ins.opname in _RAISE_OPS else "inside"
    return "inside"
