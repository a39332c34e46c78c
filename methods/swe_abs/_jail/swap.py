"""Swapping a variant into the warm process: changed function bodies get new code objects
(``__code__``), so every reference to them runs the variant; other changes fall back to running
the new module source and moving the changed objects over; modules not yet imported are served
from the variant's text by the import system. :class:`Runner` holds what the warm process keeps
(collected items, the function index, the plan)."""

from __future__ import annotations

import gc
import os
import sys
import types
from typing import Any


def code_key(code: types.CodeType, mask: bool = False) -> tuple:
    """Everything of a code object that affects behaviour (not line numbers or file names);
    with ``mask``, nested code objects count by name only (their bodies are compared apart).
    Also the host's equivalent-mutant filter (``mutation.bytecode_equivalent``)."""
    consts = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            consts.append(("<code>", c.co_qualname) if mask else code_key(c))
        else:
            consts.append((type(c).__name__, repr(c)))
    return (
        code.co_code,
        tuple(consts),
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_exceptiontable,
    )


class Unsupported(Exception):
    pass


_FUNCTION_FLAGS = 0x1 | 0x2  # CO_OPTIMIZED | CO_NEWLOCALS: a function body, not a class body


def _changed_code(old: types.CodeType, new: types.CodeType, out: list) -> None:
    if code_key(old, mask=True) != code_key(new, mask=True):
        raise Unsupported(f"{old.co_qualname}: change outside function bodies")
    olds = [c for c in old.co_consts if isinstance(c, types.CodeType)]
    news = [c for c in new.co_consts if isinstance(c, types.CodeType)]
    if [c.co_qualname for c in olds] != [c.co_qualname for c in news]:
        raise Unsupported(f"{old.co_qualname}: functions added or removed")
    for o, n in zip(olds, news, strict=True):
        if o.co_flags & _FUNCTION_FLAGS == _FUNCTION_FLAGS:
            if code_key(o) != code_key(n):
                if o.co_freevars != n.co_freevars:
                    raise Unsupported(f"{o.co_qualname}: closure changed")
                out.append((o, n))
        else:
            _changed_code(o, n, out)


class Runner:
    """Everything the warm process keeps: collected items, the function index, the plan."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.repo = plan["repo"]
        self.items: list[Any] = []
        self.by_id: dict[str, Any] = {}
        self.collect_errors: list[str] = []
        self.reports: list[Any] = []
        self.overrides: dict[str, str] = {}
        self._functions: dict[tuple[str, str, int], list[types.FunctionType]] | None = None
        self.swap_modes: list[str] = []  # how the last variant went in: code / exec / import

    # -- function index (built in the warm parent once, inherited by every child) -----------
    def functions(self) -> dict[tuple[str, str, int], list[types.FunctionType]]:
        if self._functions is None:
            index: dict[tuple[str, str, int], list[types.FunctionType]] = {}
            for obj in gc.get_objects():
                if isinstance(obj, types.FunctionType):
                    c = obj.__code__
                    if c.co_filename.startswith(self.repo):
                        key = (c.co_filename, c.co_qualname, c.co_firstlineno)
                        index.setdefault(key, []).append(obj)
            self._functions = index
        return self._functions

    def module_for(self, path: str) -> types.ModuleType | None:
        for mod in list(sys.modules.values()):
            f = getattr(mod, "__file__", None)
            if f and os.path.abspath(f) == path:
                return mod
        return None

    # -- applying a variant (in a child) ----------------------------------------------------
    def apply(self, variant: dict[str, Any] | None) -> list[tuple[Any, str, Any, Any, Any]]:
        """Swap the variant in; returns the changes [(target, kind, key, old, new)] so callers
        can toggle between reference and variant. Raises Unsupported / SyntaxError."""
        changes: list[tuple[Any, str, Any, Any, Any]] = []
        self.swap_modes = []
        if not variant:
            return changes
        files = variant.get("files", {})
        if variant.get("functions"):
            try:
                for fn_spec in variant["functions"]:
                    changes += self._swap_function(fn_spec)
                self.swap_modes.append("function")
                files = {}
            except (Unsupported, SyntaxError):
                changes = []  # nothing applied yet: fall back to the whole files
        for rel, text in files.items():
            path = os.path.join(self.repo, rel)
            mod = self.module_for(path)
            if mod is None:
                self.overrides[path] = text
                self.swap_modes.append("import")
                continue
            with open(path, encoding="utf-8") as fh:
                on_disk = fh.read()
            if on_disk == text:
                continue
            try:
                changes += self._swap_code(path, on_disk, text)
                self.swap_modes.append("code")
            except Unsupported:
                changes += self._swap_exec(mod, path, text)
                self.swap_modes.append("exec")
        for target, kind, key, _old, new in changes:
            _set(target, kind, key, new)
        return changes

    def _swap_function(self, spec: dict[str, Any]) -> list:
        """Fast path for a change inside one function body: compile just that function (in a
        class statement when it is a method, so its qualified name and ``__class__`` cell match)
        at its own line numbers, and swap its code into the live function objects."""
        import ast

        path = os.path.join(self.repo, spec["path"])
        source, cls, first = spec["source"], spec.get("class"), int(spec["first_line"])
        if cls:
            body = "".join(
                "    " + line if line.strip() else line for line in source.splitlines(True)
            )
            text, shift = f"class {cls}:\n" + body, first - 2
        else:
            text, shift = source, first - 1
        tree = ast.parse(text)
        ast.increment_lineno(tree, shift)
        module_code = compile(tree, path, "exec", dont_inherit=True)
        stack, new = [module_code], None
        while stack and new is None:
            code = stack.pop()
            for c in code.co_consts:
                if isinstance(c, types.CodeType):
                    if c.co_qualname == spec["qualname"]:
                        new = c
                        break
                    stack.append(c)
        if new is None:
            raise Unsupported(f"{spec['qualname']}: not found in the function source")
        live = self.functions().get((path, spec["qualname"], new.co_firstlineno), [])
        if not live:
            raise Unsupported(f"{spec['qualname']}: no live function object at line {first}")
        changes = []
        for fn in live:
            if fn.__code__.co_freevars != new.co_freevars:
                raise Unsupported(f"{spec['qualname']}: closure mismatch")
            changes.append((fn, "attr", "__code__", fn.__code__, new))
        return changes

    def _swap_code(self, path: str, old_text: str, new_text: str) -> list:
        old_code = compile(old_text, path, "exec", dont_inherit=True)
        new_code = compile(new_text, path, "exec", dont_inherit=True)
        pairs: list[tuple[types.CodeType, types.CodeType]] = []
        _changed_code(old_code, new_code, pairs)
        changes = []
        index = self.functions()
        for o, n in pairs:
            live = index.get((path, o.co_qualname, o.co_firstlineno), [])
            if not live:
                raise Unsupported(f"{o.co_qualname}: no live function object")
            for fn in live:
                if len(fn.__code__.co_freevars) != len(n.co_freevars):
                    raise Unsupported(f"{o.co_qualname}: closure mismatch")
                changes.append((fn, "attr", "__code__", fn.__code__, n))
        return changes

    def _swap_exec(self, mod: types.ModuleType, path: str, text: str) -> list:
        code = compile(text, path, "exec", dont_inherit=True)
        scratch = dict(mod.__dict__)
        exec(code, scratch)  # noqa: S102 - the variant, inside the sandbox
        old_funcs = _functions_of(mod.__dict__)
        new_funcs = _functions_of(scratch)
        changes: list = []
        matched_new: set[int] = set()
        for key, old in old_funcs.items():
            new = new_funcs.get(key)
            if new is None or len(old.__code__.co_freevars) != len(new.__code__.co_freevars):
                continue
            matched_new.add(id(new))
            for attr in ("__code__", "__defaults__", "__kwdefaults__"):
                changes.append((old, "attr", attr, getattr(old, attr), getattr(new, attr)))
        old_dict = mod.__dict__
        for name, value in scratch.items():
            if name.startswith("__") and name.endswith("__"):
                continue
            old_value = old_dict.get(name, _MISSING)
            if old_value is value:
                continue
            if isinstance(value, type) and isinstance(old_value, type):
                if value.__qualname__ == old_value.__qualname__:
                    for attr, v in vars(value).items():
                        if attr in ("__dict__", "__weakref__", "__module__", "__doc__"):
                            continue
                        ov = vars(old_value).get(attr, _MISSING)
                        if isinstance(v, types.FunctionType) and id(v) in matched_new:
                            continue
                        if ov is _MISSING or not _same_member(ov, v):
                            changes.append((old_value, "attr", attr, ov, v))
                    continue
            if isinstance(value, types.FunctionType) and id(value) in matched_new:
                continue
            changes.append((old_dict, "item", name, old_value, value))
        return changes


_MISSING = object()


def _unwrapped(member: Any) -> Any:
    if isinstance(member, staticmethod | classmethod | types.MethodType):
        return member.__func__
    return member


def _same_member(a: Any, b: Any) -> bool:
    # no getattr on arbitrary members: six's lazy attributes import their module when asked
    # for any attribute (``six.moves.dbm_gnu`` → ``_gdbm``, missing in the sandbox)
    fa, fb = _unwrapped(a), _unwrapped(b)
    if isinstance(fa, types.FunctionType) and isinstance(fb, types.FunctionType):
        return False  # a method whose function was not matched by name: take the new one
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _functions_of(namespace: dict[str, Any]) -> dict[tuple[str, int], types.FunctionType]:
    """Functions whose globals are ``namespace``, keyed by (qualname, occurrence)."""
    out: dict[tuple[str, int], types.FunctionType] = {}
    counts: dict[str, int] = {}
    found = [
        o
        for o in gc.get_objects()
        if isinstance(o, types.FunctionType) and o.__globals__ is namespace
    ]
    found.sort(key=lambda f: (f.__code__.co_qualname, f.__code__.co_firstlineno))
    for fn in found:
        q = fn.__code__.co_qualname
        n = counts.get(q, 0)
        counts[q] = n + 1
        out[(q, n)] = fn
    return out


def _set(target: Any, kind: str, key: str, value: Any) -> None:
    if kind == "attr":
        if value is _MISSING:
            try:
                delattr(target, key)
            except AttributeError:
                pass
        else:
            setattr(target, key, value)
    elif value is _MISSING:
        target.pop(key, None)
    else:
        target[key] = value


def toggle(changes: list, to_variant: bool) -> None:
    for target, kind, key, old, new in changes:
        _set(target, kind, key, new if to_variant else old)


def install_overrides(runner: Runner) -> None:
    """Serve variant text for modules imported after the swap (read by the import system)."""
    if not runner.overrides:
        return
    import importlib.machinery as machinery

    original = machinery.SourceFileLoader.get_data
    overrides = runner.overrides

    def get_data(self: Any, path: str) -> bytes:
        if path in overrides:
            return overrides[path].encode("utf-8")
        if path.endswith(".pyc"):
            raise OSError("bytecode cache disabled for variant sources")
        return original(self, path)

    machinery.SourceFileLoader.get_data = get_data  # type: ignore[method-assign]
    sys.dont_write_bytecode = True
