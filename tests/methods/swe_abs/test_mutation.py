"""The operator mutator: mutmut's families, its skip rules, line preservation, and the same
mutant set as mutmut 3.8 itself (the reference implementation) generates."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from methods.swe_abs._mutation import (
    FAMILIES,
    bytecode_equivalent,
    changed_functions,
    generate_mutants,
)


def _changed_line(original: str, mutant: str) -> tuple[str, str]:
    pairs = [
        (a, b) for a, b in zip(original.splitlines(), mutant.splitlines(), strict=True) if a != b
    ]
    assert len(pairs) == 1, pairs
    return pairs[0][0].strip(), pairs[0][1].strip()


def _mutated_lines(src: str) -> set[str]:
    return {_changed_line(src, m.source)[1] for m in generate_mutants("m.py", src)}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("return a + b", {"return a - b"}),
        ("return a < b", {"return a <= b"}),
        ("return a == b", {"return a != b"}),
        ("return a is None", {"return a is not None"}),
        ("return a not in b", {"return a in b"}),
        ("return a and b", {"return a or b"}),
        ("return not a", {"return a"}),
        ("return -a", {"return +a"}),
        ("return a ** 2", {"return a * 2", "return a ** 3"}),
        ("return 'ab'", {"return 'XXabXX'", "return 'AB'"}),
        ("return True", {"return False"}),
        ("return copy.deepcopy(a)", {"return copy.copy(a)", "return copy.deepcopy(None)"}),
        ("return s.lower()", {"return s.upper()"}),
        (
            "return s.split(',', 1)",
            {
                "return s.rsplit(',', 1)",
                "return s.split(None, 1)",
                "return s.split(',', None)",
                "return s.split(1)",
                "return s.split(',')",
                "return s.split(',', 2)",
                "return s.split('XX,XX', 1)",
            },
        ),
        (
            "return f(a, b)",
            {"return f(None, b)", "return f(a, None)", "return f(b)", "return f(a)"},
        ),
        ("return dict(a=1)", {"return dict(aXX=1)", "return dict(a=2)", "return dict(a=None)"}),
        ("return (lambda: a)", {"return (lambda: None)"}),
        (
            "return a if b else c",
            {"return a if (b) and False else c", "return a if (b) or True else c"},
        ),
        ("return len(a + 1)", set()),  # len(...) is never mutated
    ],
)
def test_each_family(line, expected):
    src = f"def f(a, b=None, c=None, s='', copy=None):\n    {line}\n"
    got = {m for m in _mutated_lines(src) if not m.startswith("def ")}
    assert got == expected


def test_statements_keywords_and_match():
    src = (
        "def f(xs):\n"
        "    total = 0\n"
        "    for x in xs:\n"
        "        if x:\n"
        "            continue\n"
        "        total += x\n"
        "        break\n"
        "    match total:\n"
        "        case 0:\n"
        "            return 'zero'\n"
        "        case _:\n"
        "            return 'more'\n"
    )
    ms = generate_mutants("m.py", src)
    families = {m.family for m in ms}
    assert {
        "assignment",
        "augmented_assignment",
        "keyword",
        "operator",
        "match",
        "number",
        "string",
    } <= families
    lines = {
        _changed_line(src, m.source) for m in ms if m.family in ("keyword", "augmented_assignment")
    }
    assert ("continue", "break") in lines and ("break", "return") in lines
    assert ("total += x", "total = x") in lines
    assert all(m.source.count("\n") == src.count("\n") for m in ms)  # line numbers kept
    for m in ms:
        compile(m.source, "m.py", "exec")


def test_skip_rules():
    src = (
        "import copy\n"
        "X = 1 + 2\n"  # module level: never mutated
        "@decorator\n"
        "def decorated(a):\n"
        "    return a + 1\n"
        "def annotated(a: int = 3) -> int:\n"
        "    '''doc'''\n"
        "    return isinstance(a, int)\n"
        "def pragma(a):\n"
        "    return a + 1  # pragma: no mutate\n"
        "def not_covered(a):  # pragma: no cover\n"
        "    return a + 1\n"
        "class C:\n"
        "    def __new__(cls):\n"
        "        return 1 + 1\n"
        "    @staticmethod\n"
        "    def s(a):\n"
        "        return a - 1\n"
    )
    ms = generate_mutants("m.py", src)
    assert {m.function for m in ms} == {"annotated", "C.s"}
    assert {m.line for m in ms if m.function == "annotated"} == {6}  # only the default 3 -> 4
    assert [m for m in ms if m.function == "annotated"][0].in_signature
    with_decorated = generate_mutants("m.py", src, skip_decorated=False)
    assert "decorated" in {m.function for m in with_decorated}


def test_line_restriction_and_ids():
    src = "def f(a):\n    b = a + 1\n    return b * 2\n"
    only3 = generate_mutants("m.py", src, lines={3})
    assert only3 and {m.line for m in only3} == {3}
    assert len({m.id for m in generate_mutants("m.py", src)}) == len(generate_mutants("m.py", src))
    assert set(FAMILIES) >= {m.family for m in generate_mutants("m.py", src)}


def test_multiline_call_keeps_line_numbers():
    src = "def f(a, b):\n    return g(\n        a,\n        b,\n    )\n"
    ms = [m for m in generate_mutants("m.py", src) if m.family == "arg_removal"]
    assert len(ms) == 4
    for m in ms:
        assert m.source.count("\n") == src.count("\n")
        compile(m.source, "m.py", "exec")


def test_bytecode_equivalence_and_changed_functions():
    a = "def f(x):\n    return x + 1\n"
    assert bytecode_equivalent(a, "def f(x):\n    # comment\n    return (x + 1)\n")
    assert not bytecode_equivalent(a, "def f(x):\n    return x - 1\n")
    assert bytecode_equivalent(a, "\n\ndef f(x):\n    return x + 1\n")  # line shifts do not count
    assert changed_functions(
        a + "def g():\n    pass\n", "def f(x):\n    return x - 1\ndef g():\n    pass\n"
    ) == ["f"]


def test_variant_fast_path_for_methods():
    src = "class K:\n    def m(self, a):\n        return a + 1\n"
    [m] = [m for m in generate_mutants("m.py", src) if m.family == "operator"]
    v = m.variant()
    [fn] = v["functions"]  # type: ignore[index]
    assert fn["qualname"] == "K.m" and fn["class"] == "K" and fn["first_line"] == 2
    assert fn["source"].startswith("def m(self, a):") and "a - 1" in fn["source"]


def _mutmut_mutants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, src: str) -> set[str]:
    mutmut = pytest.importorskip("mutmut.mutation.file_mutation")
    import mutmut.configuration as configuration

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.mutmut]\nsource_paths = ["pkg"]\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(configuration, "_config", None, raising=False)
    code = mutmut.mutate_file_contents("pkg/m.py", src).code
    out = set()
    for node in ast.parse(code).body:
        if isinstance(node, ast.FunctionDef):
            m = re.match(r"x_(.*)__mutmut_\d+$", node.name)
            if m:
                node.name = m.group(1)
                out.add(ast.dump(node))
    return out


def _ours(src: str) -> set[str]:
    out = set()
    for mu in generate_mutants("m.py", src):
        for node in ast.parse(mu.source).body:
            if isinstance(node, ast.FunctionDef) and node.name == mu.function:
                out.add(ast.dump(node))
    return out


SAMPLE = '''
import copy


def mixed(a, b=1, flag=True):
    """Docstrings are not mutated."""
    total = a + b * 2
    if total > 10 and flag:
        total -= 3
    names = [n.upper() for n in ("x", 'y')]
    parts = "a,b".split(",", 1)
    kw = dict(left=1, right=b)
    pick = (lambda v: v ** 2)(total) if not flag else copy.deepcopy(names)
    other = (pick)(total, *names, **kw)
    for i in range(3):
        if i is None or i in kw:
            continue
        break
    return total, names, parts, kw, pick, other, len(names), isinstance(a, int)
'''


def test_same_mutants_as_mutmut(tmp_path, monkeypatch):
    theirs = _mutmut_mutants(tmp_path, monkeypatch, SAMPLE)
    ours = _ours(SAMPLE)
    assert len(theirs) > 40
    assert ours == theirs
