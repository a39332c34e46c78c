"""The differential oracle and the tests it writes (issue 27, items 1-5), end to end: the jail
runner (as shipped to the sandbox) runs on a small repository in a subprocess on the host, with
pytest, coverage and Hypothesis from the project's environment. No candidate from any candidate
set is used: the variants are written here, one per kind of wrong patch the issue lists."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

MOD = """\
def to_bytes(s, encoding="utf-8"):
    if isinstance(s, str):
        return s.encode(encoding)
    if isinstance(s, bytes):
        return s
    raise TypeError("not text or bytes")


def add_key(d, k, default=0):
    out = dict(d)
    out[k] = out.get(k, default) + 1
    return out


def size(s):
    return len(bytes(s))


def opaque(o):
    return 1


def humanize(word):
    if word.endswith("_id"):
        word = word[:-3]
    return word.replace("_", " ")


def pick(algorithm="modern"):
    if algorithm not in ("legacy", "modern"):
        raise ValueError("algorithm must be 'legacy' or 'modern'")
    return algorithm.upper()


def total(seq, start=0):
    acc = start
    for x in seq:
        acc = acc + x
    return acc


def to_int(s):
    if s.isascii() and s.isdigit():
        return int(s)
    return None


def suffix(n):
    if 11 <= n % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def merged(d, extra=None):
    out = dict(d)
    out.update(extra or {})
    return out


def pairs(seq):
    it = iter(seq)
    for a in it:
        yield (a, next(it, None))


def codec(s, encoding="utf-8", errors="strict"):
    return (s, encoding, errors)


def nth(n):
    n = abs(int(n))
    if 11 <= n % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def count_by(key, seq):
    out = {}
    for x in seq:
        k = key(x)
        out[k] = out.get(k, 0) + 1
    return out


def label(n, short=False):
    return str(n) if short else "#" + str(n)


def decoded(data, errors="strict"):
    return data.decode("utf-8", errors)


def get_or(d, k, default=None):
    return d[k] if k in d else default


def unset(cols, n):
    out = [True] * n
    for i in cols:
        out[i] = False
    return out


def spans(n, size):
    size = int(size)
    for i in range(0, n, size):
        yield (i, min(i + size, n))
"""
TESTS = """\
from pkg.mod import add_key, size, to_bytes


def test_to_bytes():
    assert to_bytes("a") == b"a"


def test_add_key():
    assert add_key({"a": 1}, "a", 5) == {"a": 2}


def test_size():
    assert size(b"ab") == 2
"""


def _mod_with(old: str, new: str) -> str:
    """MOD with ``old`` (which must occur in it) replaced by ``new``: a wrong fix's module."""
    assert old in MOD and old != new, old
    return MOD.replace(old, new)


def _variant(old: str, new: str) -> dict[str, Any]:
    return {"files": {"pkg/mod.py": _mod_with(old, new)}}


def _run(tmp_path: Path, jobs: list[dict[str, Any]], site: str) -> dict[str, Any]:
    from methods.swe_abs import RUNNER_SOURCE, RunnerEnv

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "mod.py").write_text(MOD)
    (repo / "tests" / "test_mod.py").write_text(TESTS)
    runner = tmp_path / "runner.py"
    if isinstance(RUNNER_SOURCE, bytes):
        runner.write_bytes(RUNNER_SOURCE)
    else:
        runner.write_text(RUNNER_SOURCE)
    plan = {
        "repo": str(repo),
        "sys_path": [str(repo)],
        "test_files": ["tests/test_mod.py"],
        "target_files": ["pkg/mod.py"],
        "pytest_args": ["--tb=native"],
        "jobs": jobs,
        "result_path": str(tmp_path / "result.json"),
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    res = subprocess.run(
        [RunnerEnv().python, str(runner), str(tmp_path / "plan.json")],
        cwd=repo,
        env={**RunnerEnv(pythonpath=(site,)).environment(), "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads((tmp_path / "result.json").read_text())["jobs"]


def _diff(call: str, args: dict[str, str], variant: dict[str, Any], n: int = 100) -> dict:
    return {
        "id": "d",
        "kind": "differential",
        "spec": {"setup": "from pkg import mod", "call": call, "args": args},
        "variant": variant,
        "max_examples": n,
        "test_name": "test_d",
        "timeout": 120,
    }


TEXT_OR_BYTES = "st.one_of(st.text(max_size=3), st.binary(max_size=3), st.none(), st.integers())"
_GOLD = {"id": "gold", "kind": "tests", "coverage": True, "durations": True, "timeout": 60}
_EXPLORE_BUFFERS = {
    "id": "buffers",
    "kind": "explore",
    "spec": {
        "setup": "from pkg import mod",
        "call": "mod.size(s)",
        "args": {"s": "st.one_of(st.binary(min_size=1, max_size=2).map(bytearray), "
                      "st.just(memoryview(b'ab')))"},
    },
    "max_examples": 40,
    "max_tests": 10,
    "test_name": "test_e",
    "uncovered_from": {"job": "gold", "targets": {"pkg/mod.py": [15, 16]}},
    "timeout": 120,
}  # fmt: skip
_EXPLORE_OPAQUE = {
    "id": "opaque",
    "kind": "explore",
    "spec": {"setup": "from pkg import mod", "call": "mod.opaque(o)", "args": {"o": "st.builds(object)"}},
    "max_examples": 10,
    "max_tests": 5,
    "test_name": "test_o",
    "uncovered_from": {"job": "gold", "targets": {"pkg/mod.py": [19, 20]}},
    "timeout": 120,
}  # fmt: skip
_EXPLORE_ENDS = {
    "id": "ends",
    "kind": "explore",
    "spec": {"setup": "from pkg import mod", "call": "mod.humanize(w)",
             "args": {"w": "st.text(alphabet='a_id ', max_size=8)"}},
    "max_examples": 300,
    "max_tests": 100,
    "test_name": "test_h",
    "uncovered_from": {"job": "gold", "targets": {"pkg/mod.py": [23, 24, 25, 26]}},
    "timeout": 120,
}  # fmt: skip


def _lines_of(name: str) -> list[int]:
    """The body lines of MOD's function ``name`` (1-based)."""
    lines = MOD.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith(f"def {name}("))) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("def ")), len(lines))
    return [i + 1 for i in range(start, end) if lines[i].strip()]


def _near(job_id: str, call: str, args: dict[str, str], function: str) -> dict:
    return {
        "id": job_id,
        "kind": "explore",
        "domain": "near",
        "spec": {"setup": "from pkg import mod", "call": call, "args": args},
        "max_examples": 200,
        "max_tests": 40,
        "test_name": f"test_{job_id}",
        "uncovered_from": {"job": "gold", "targets": {"pkg/mod.py": _lines_of(function)}},
        "timeout": 120,
    }


def _foreign(job_id: str, call: str, args: dict[str, str], base: dict[str, Any]) -> dict:
    return {
        "id": job_id,
        "kind": "foreign",
        "spec": {"setup": "from pkg import mod", "call": call, "args": args},
        "base_variant": base,
        "targets": ["pkg/mod.py"],
        "max_examples": 20,
        "max_tests": 40,
        "test_name": f"test_{job_id}",
        "timeout": 120,
    }


# before the fix: pick() validated nothing; total() returned `start` for a None sequence
_PICK_BEFORE = _variant(
    '    if algorithm not in ("legacy", "modern"):\n'
    "        raise ValueError(\"algorithm must be 'legacy' or 'modern'\")\n",
    "",
)
_TOTAL_BEFORE = _variant(
    "    acc = start\n", "    if seq is None:\n        return start\n    acc = start\n"
)
_JOBS = [
    _GOLD,
    _foreign("pick", "mod.pick(a)", {"a": "st.sampled_from(['legacy', 'modern'])"}, _PICK_BEFORE),
    _foreign("total", "mod.total(seq, start)",
             {"seq": "st.lists(st.integers(-3, 3), max_size=3)", "start": "st.integers(0, 2)"},
             _TOTAL_BEFORE),
    # before the fix nth() gave 11-13 the suffix of their last digit
    _foreign("nth", "mod.nth(n)", {"n": "st.integers(0, 30)"},
             _variant('    if 11 <= n % 100 <= 13:\n        return "th"\n', "")),
    _foreign("count_by", "mod.count_by(abs if by_abs else str, seq)",
             {"by_abs": "st.booleans()",
              "seq": "st.lists(st.integers(-3, 3), min_size=1, max_size=3)"},
             {"files": {"pkg/mod.py": MOD}}),
    # tenth round: a flag as 1 or 0; a generator's reading of a one-shot iterator
    _foreign("label", "mod.label(n, short=short)",
             {"n": "st.integers(0, 9)", "short": "st.booleans()"}, {"files": {"pkg/mod.py": MOD}}),
    _foreign("to_bytes", "mod.to_bytes(s)", {"s": "st.text(alphabet='ab', max_size=2)"},
             {"files": {"pkg/mod.py": MOD}}),
    _foreign("pairs", "mod.pairs(seq)",
             {"seq": "st.lists(st.integers(0, 3), min_size=2, max_size=4)"},
             {"files": {"pkg/mod.py": MOD}}),
    # thirteenth round: a value without behaviour, passed through as the code before did
    _foreign("get_or", "mod.get_or(d, k, default)",
             {"d": "st.dictionaries(st.sampled_from('ab'), st.integers(0, 3), max_size=1)",
              "k": "st.sampled_from('ab')", "default": "st.integers(0, 3)"},
             {"files": {"pkg/mod.py": MOD}}),
    # fifteenth round: column numbers that are no int; a generator failing when read; a call in
    # a conditional's branch the example does not take
    _foreign("unset", "mod.unset(cols, n)",
             {"cols": "st.lists(st.integers(0, 2), min_size=1, max_size=3)",
              "n": "st.integers(3, 4)"}, {"files": {"pkg/mod.py": MOD}}),
    # sixteenth round: a fix that changes every declared outcome (base: no teens rule)
    _foreign("teens", "mod.nth(n)", {"n": "st.integers(11, 13)"},
             _variant('    if 11 <= n % 100 <= 13:\n        return "th"\n', "")),
    _foreign("spans", "mod.spans(n, size)", {"n": "st.integers(1, 6)", "size": "st.integers(1, 3)"},
             {"files": {"pkg/mod.py": MOD}}),
    _foreign("branch", "mod.total(seq, start) if with_start else mod.total(seq)",
             {"seq": "st.lists(st.integers(0, 3), min_size=2, max_size=3)",
              "start": "st.integers(1, 2)", "with_start": "st.booleans()"},
             {"files": {"pkg/mod.py": MOD}}),
    _EXPLORE_ENDS,
    # declared domains that never reach where the wrong fixes below differ
    _near("near_int", "mod.to_int(s)", {"s": "st.text(alphabet='0123456789', min_size=1, max_size=3)"},
          "to_int"),
    _near("near_suffix", "mod.suffix(n)", {"n": "st.integers(0, 9)"}, "suffix"),
    # seventh round: the code's literal twice or respelled; a newline after an accepted name
    _near("near_humanize", "mod.humanize(s)", {"s": "st.sampled_from(['tag', 'user'])"},
          "humanize"),
    _near("near_pick", "mod.pick(s)", {"s": "st.sampled_from(['legacy', 'modern'])"}, "pick"),
    # twelfth round: an edit whose effect needs another argument's value
    _near("near_decoded", "mod.decoded(data, errors=err)",
          {"data": "st.sampled_from([b'ab', b'ab\\xff'])",
           "err": "st.sampled_from(['ignore', 'replace'])"}, "decoded"),
    {**_diff("mod.to_bytes(s)", {"s": TEXT_OR_BYTES},
             _variant('raise TypeError("not text or bytes")', 'raise AttributeError("no")')),
     "id": "exc_type"},
    _EXPLORE_BUFFERS,
    _EXPLORE_OPAQUE,
    {**_diff("mod.to_bytes(s, encoding=enc)",
             {"s": "st.text(max_size=3)", "enc": "st.sampled_from(['utf-8', 'latin-1'])"},
             _variant('def to_bytes(s, encoding="utf-8"):', 'def to_bytes(s, encoding="ascii"):')),
     "id": "default"},
    {**_diff("mod.add_key(d, k)",
             {"d": "st.dictionaries(st.sampled_from('ab'), st.integers(0, 3), max_size=2)",
              "k": "st.sampled_from('ab')"},
             _variant("    out = dict(d)\n", "    out = d\n")),
     "id": "mutation"},
    {**_diff("mod.to_bytes(s)", {"s": TEXT_OR_BYTES},
             _variant('raise TypeError("not text or bytes")', "return None")),
     "id": "swallowed"},
    {**_diff("mod.to_bytes(s)", {"s": "st.binary(max_size=3)"},
             _variant("if isinstance(s, bytes):", "if type(s) is bytes:")),
     "id": "subclass"},
    # eighth round: what a result shares, how far a call reads, keywords passed by position
    {**_diff("mod.merged(d, extra)",
             {"d": "st.dictionaries(st.sampled_from('ab'), st.lists(st.integers(0, 1), max_size=1), max_size=2)",
              "extra": "st.one_of(st.none(), st.just({}), st.just({'c': 1}))"},
             _variant("    out = dict(d)\n", "    if not extra:\n        return d\n    out = dict(d)\n")),
     "id": "shared"},
    {**_diff("mod.pairs(iter(seq))", {"seq": "st.lists(st.integers(0, 3), max_size=4)"},
             _variant("    it = iter(seq)\n", "    it = iter(list(seq))\n")),
     "id": "reading"},
    {"id": "by_position", "kind": "explore", "max_examples": 20, "max_tests": 5,
     "spec": {"setup": "from pkg import mod", "call": "mod.codec(s, encoding=e, errors=r)",
              "args": {"s": "st.text(max_size=2)", "e": "st.just('ascii')", "r": "st.just('ignore')"}},
     "test_name": "test_p", "timeout": 120,
     "uncovered_from": {"job": "gold", "targets": {"pkg/mod.py": _lines_of("codec")}}},
    {"id": "default_mutant", "kind": "tests", "timeout": 60,
     "variant": _variant("def add_key(d, k, default=0):", "def add_key(d, k, default=1):"),
     "select_from": {"job": "gold", "lines": {"pkg/mod.py": [9]},
                     "import_time": {"pkg/mod.py": [1, 9, 15, 19]}}},
]  # fmt: skip


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, swe_abs_site) -> dict[str, Any]:
    """Every job below in one plan: one pytest collection, each job in its own child."""
    return _run(tmp_path_factory.mktemp("oracle"), _JOBS, swe_abs_site)


# ---------------------------------------------------------------------- item 1: exception types
def test_exception_types_are_compared_and_emitted(jobs):
    r = jobs["exc_type"]
    assert r.get("disagreement"), r
    assert "pytest.raises(TypeError)" in r["test"]
    assert "pytest.raises(Exception)" not in r["test"]


# ------------------------------------------------------------ item 2: every domain value as code
def test_every_domain_value_becomes_test_code(jobs):
    code = "\n".join(t["test"] for t in jobs["buffers"]["tests"])
    assert "bytearray(b'" in code and "memoryview(b'ab')" in code, code
    assert jobs["buffers"].get("unexpressible", {}) == {}
    # a value with no expression is counted and reported, by type
    assert jobs["opaque"]["unexpressible"].get("object", 0) >= 1, jobs["opaque"]


# ------------------------------------------------- item 3: what the oracle observes about a call
def test_optional_arguments_are_omitted_signature_aware(jobs):
    r = jobs["default"]
    assert r.get("disagreement"), r
    assert "mod.to_bytes(s)" in r["test"]


def test_mutation_of_the_callers_input_is_compared(jobs):
    r = jobs["mutation"]
    assert r.get("disagreement"), r
    assert "_swe_abs_norm(d)" in r["test"]  # the emitted test checks the input after the call


def test_raised_versus_returned_is_a_disagreement(jobs):
    r = jobs["swallowed"]
    assert r.get("disagreement"), r
    assert "pytest.raises(TypeError)" in r["test"]


def test_subclass_instances_of_declared_types_are_drawn(jobs):
    r = jobs["subclass"]
    assert r.get("disagreement"), r
    assert "_SweAbsBytes(b" in r["test"]


def test_a_result_sharing_the_callers_container_is_a_disagreement(jobs):
    r = jobs["shared"]
    assert r.get("disagreement"), r
    assert "result is d" in r["disagreement"]["variant"]
    assert "_swe_abs_shared(_swe_abs_result, {'d': d" in r["test"]


def test_reading_an_iterator_further_ahead_is_a_disagreement(jobs):
    r = jobs["reading"]
    assert r.get("disagreement"), r
    assert "mod.pairs(_swe_abs_counted(seq))" in r["test"]
    assert "_swe_abs_within(_swe_abs_steps" in r["test"]


def test_keyword_arguments_are_checked_once_by_position(jobs):
    tests = jobs["by_position"]["tests"]
    by_position = [t for t in tests if t.get("target", "").startswith("by position")]
    assert len(by_position) == 1, tests
    assert "mod.codec(s, e, r)" in by_position[0]["test"]
    assert not any("mod.codec(s, e, r)" in t["test"] for t in tests if t not in by_position)


# ------------------------------------------------ item 4: import-time lines and per-test coverage
def test_default_argument_mutant_runs_the_tests_that_import_the_module(jobs):
    r = jobs["default_mutant"]
    assert not r.get("no_tests"), r
    assert set(r["ran"]) == set(jobs["gold"]["status"])  # every test imports the module


# ------------------------------------------- the characterisation search spreads over the domain
def _humanize(word: str) -> str:
    return (word[:-3] if word.endswith("_id") else word).replace("_", " ")


def test_explore_keeps_inputs_where_plausible_wrong_fixes_differ(jobs):
    """Inputs a length-and-type class cannot tell apart (``'a_ida'``, ``'aid'``, ``'a_b_c'``)
    are where wrong fixes of an end-anchored rule differ; the chosen tests must reach each."""

    from methods.swe_abs._jail.values import NORMALISE_SOURCE

    ns: dict[str, Any] = {}
    exec(NORMALISE_SOURCE, ns)  # the generator's subclasses, as in an emitted test module
    tests = [t["test"] for t in jobs["ends"]["tests"]]
    inputs = [str(eval(m, ns)) for t in tests for m in re.findall(r"w = (.+)", t)]
    wrong = {
        "removes '_id' anywhere": lambda w: w.replace("_id", "").replace("_", " "),
        "removes a bare trailing 'id' too": lambda w: re.sub("_?id$", "", w).replace("_", " "),
        "replaces the first '_' only": lambda w: (w[:-3] if w.endswith("_id") else w).replace(
            "_", " ", 1
        ),
    }
    missed = [k for k, f in wrong.items() if all(f(w) == _humanize(w) for w in inputs)]
    assert not missed, (missed, inputs)


# ------------------------------------------ the gold code's rejections of foreign inputs, pinned
def _emitted(tests: list[dict[str, Any]], **where: str) -> list[dict[str, Any]]:
    return [t for t in tests if all(t[k] == v for k, v in where.items())]


def test_foreign_explicit_rejections_are_pinned_whatever_the_code_before(jobs):
    """pick() validates by a raise statement (the fix itself: nothing validated before), so
    None, bytes and a list in place of the algorithm are pinned as ValueError."""
    tests = jobs["pick"]["tests"]
    for kind in ("none", "bytes", "in_list"):
        found = _emitted(tests, kind=kind, rule="explicit", outcome="raises builtins.ValueError")
        assert found, (kind, tests)
        assert "pytest.raises(ValueError)" in found[0]["test"]
    assert "mod.pick(None)" in _emitted(tests, kind="none")[0]["test"]


def test_foreign_errors_are_pinned_only_when_raised_on_purpose_or_the_callers_own(jobs):
    r = jobs["total"]
    tests = r["tests"]
    # the caller's own failing iterable comes through, before the fix and after it, whether it
    # fails at its end or after its first item
    for kind in ("failing_iterable", "failing_early"):
        prop = _emitted(tests, slot="arg0", kind=kind, rule="propagated")
        assert prop and "pytest.raises(_SweAbsBoom)" in prop[0]["test"], (kind, tests)
        assert "_SweAbsFailingIterable([" in prop[0]["test"]
    assert {t["rule"] for t in tests} == {"propagated", "raised_before", "read_alike",
                                          "unchanged", "settings"}, tests  # fmt: skip
    # a value without behaviour (or without a truth value), or None (seventeenth round),
    # returned as ``start`` of an empty sum, before the fix too
    assert {(t["slot"], t["kind"]) for t in _emitted(tests, rule="unchanged")} == {
        ("arg1", "opaque"),
        ("arg1", "no_truth"),
        ("arg1", "none"),
    }, tests
    assert r["not_pinned"] >= 1 and r["returned"] >= 1, r  # an empty seq with start=None returns
    assert r["examples"] >= 1 and r["timeouts"] == 0


def test_foreign_failed_operations_pin_a_failure_of_any_type_where_the_code_before_failed(jobs):
    """``acc + x`` on a text or list start fails inside total(), as it did before the fix:
    pinned as some exception (a correct fix may fail otherwise, not return), with no state.
    total(None) returned ``start`` before the fix: gold's TypeError there is not pinned."""
    tests = jobs["total"]["tests"]
    # None for an int is "no bound": gold's failure there is never pinned (what it returns as
    # the tree before the fix did is, under ``unchanged``)
    assert not _emitted(tests, slot="arg1", kind="none", rule="raised_before"), tests
    for kind in ("text", "in_list"):
        found = _emitted(tests, slot="arg1", kind=kind, rule="raised_before")
        assert found, (kind, tests)
        assert "pytest.raises(Exception):" in found[0]["test"]
        assert "_swe_abs_norm(seq)" not in found[0]["test"]
    assert not _emitted(tests, slot="arg0", kind="none"), tests
    # beside an empty sequence a correct fix may return before it adds anything: nothing pinned
    raised = _emitted(tests, rule="raised_before")
    assert raised and not [t for t in raised if "    seq = []\n" in t["test"]], raised
    # nor beside a zero start, where the sequence is replaced (an unhashable first item)
    on_seq = _emitted(tests, slot="arg0", rule="raised_before")
    assert on_seq and not [t for t in on_seq if "    start = 0\n" in t["test"]], on_seq


def test_foreign_none_for_an_integer_is_no_failure_pinned(jobs):
    """``None`` for an integer is Python's "no bound" (islice(it, None)); nth(None) fails in gold
    and before the fix, but a fix may read it so: not pinned. A text for it is."""
    tests = jobs["nth"]["tests"]
    assert not _emitted(tests, kind="none"), tests
    assert _emitted(tests, kind="in_list", rule="raised_before"), tests


def test_foreign_one_shot_iterators_are_pinned_where_read_as_the_sequence(jobs):
    """total() returns the same on iter([...]) as on the list, before the fix and after: the
    result is pinned (two or more items, so that a second pass over the input shows)."""
    found = _emitted(jobs["total"]["tests"], slot="arg0", kind="iterator", rule="read_alike")
    assert found, jobs["total"]["tests"]
    assert all(re.search(r"mod\.total\(_swe_abs_counted\(\[[^\]]*, ", t["test"]) for t in found)
    assert not _emitted(jobs["pick"]["tests"], kind="iterator")  # a text is no sequence here


def test_foreign_one_shot_iterators_pin_how_far_the_call_reads_ahead(jobs, tmp_path, monkeypatch):
    """issue 27, tenth round: pairs() is a generator; a fix that reads its input whole when
    called (then hands out pairs) returns the same list but reads ahead of the caller."""
    found = _emitted(jobs["pairs"]["tests"], slot="arg0", kind="iterator", rule="read_alike")
    assert found and all("_swe_abs_within(_swe_abs_steps" in t["test"] for t in found), found
    eager = _mod_with(
        "def pairs(seq):\n    it = iter(seq)\n    for a in it:\n        yield (a, next(it, None))\n",
        "def pairs(seq):\n    items = list(seq) + [None]\n"
        "    return iter([(items[i], items[i + 1]) for i in range(0, len(items) - 1, 2)])\n",
    )
    assert _failures(found, eager, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}


def test_foreign_mappings_are_pinned_where_read_as_the_sequence(jobs, tmp_path, monkeypatch):
    """issue 27, tenth round: total() sums a dict's keys as it sums the list (before the fix
    too); a fix that indexes the sequence fails."""
    mapping = _emitted(jobs["total"]["tests"], slot="arg0", kind="mapping", rule="read_alike")
    assert mapping and "dict.fromkeys([" in mapping[0]["test"], jobs["total"]["tests"]
    indexed = _mod_with("    for x in seq:\n        acc = acc + x\n",
                          "    for i in range(len(seq)):\n        acc = acc + seq[i]\n")  # fmt: skip
    failures = _failures(mapping, indexed, tmp_path, monkeypatch)
    assert failures["gold"] == 0 and failures["wrong"] >= 1, failures


def test_foreign_sequences_read_by_index_are_pinned_where_read_as_the_list(
    jobs, tmp_path, monkeypatch
):
    """issue 27, eleventh round: total() sums an object read by index alone (``for`` follows
    ``__getitem__``) as it sums the list; a fix that takes ``len`` of it fails."""
    found = _emitted(jobs["total"]["tests"], slot="arg0", kind="sequence", rule="read_alike")
    assert found and "_SweAbsSequence([" in found[0]["test"], jobs["total"]["tests"]
    indexed = _mod_with("    for x in seq:\n        acc = acc + x\n",
                        "    for i in range(len(seq)):\n        acc = acc + seq[i]\n")  # fmt: skip
    assert _failures(found, indexed, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}


def test_foreign_sources_failing_with_runtimeerror_pin_it_through(jobs, tmp_path, monkeypatch):
    """issue 27, twelfth round: total()'s caller's iterable failing with ``RuntimeError`` at once,
    after its first item or at its end comes through; a fix that catches ``RuntimeError`` beside
    ``StopIteration`` around its reading returns ``start`` instead. The probe's own error class
    alone (``_SweAbsBoom``) would not show it."""
    tests = jobs["total"]["tests"]
    found = [t for t in _emitted(tests, slot="arg0", rule="propagated")
             if t["kind"].endswith("_runtimeerror")]  # fmt: skip
    assert {t["kind"] for t in found} >= {"failing_at_once_runtimeerror",
                                           "failing_early_runtimeerror"}, tests  # fmt: skip
    assert all("pytest.raises(RuntimeError)" in t["test"] for t in found), found
    catching = _mod_with(
        "    for x in seq:\n        acc = acc + x\n",
        "    try:\n        for x in seq:\n            acc = acc + x\n"
        "    except (StopIteration, RuntimeError):\n        pass\n",
    )
    assert _failures(found, catching, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}
    boom = _emitted(tests, slot="arg0", kind="failing_iterable", rule="propagated")
    assert boom, tests  # the probe's own class: not caught by such a fix
    assert _failures(boom, catching, tmp_path / "boom", monkeypatch) == {"gold": 0, "wrong": 0}


def test_foreign_integers_read_by_index_are_pinned_where_read_as_the_integer(
    jobs, tmp_path, monkeypatch
):
    """issue 27, twelfth round: nth() reads an integer that is no int as the integer (``int()``
    takes it), before the fix too; a fix that checks ``isinstance(n, int)`` fails. Since the
    fifteenth round it does arithmetic as an int does (NumPy's integers do): total() reads it as
    its ``start`` alike, and a fix that checks the start's type fails there too."""
    found = _emitted(jobs["nth"]["tests"], slot="arg0", kind="index", rule="read_alike")
    assert found and all("_SweAbsIndex(" in t["test"] for t in found), jobs["nth"]["tests"]
    checked = _mod_with(
        "    n = abs(int(n))",
        "    if not isinstance(n, int):\n        raise TypeError(n)\n    n = abs(int(n))",
    )
    assert _failures(found, checked, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}
    _pinned_and_failing_on(
        _emitted(jobs["total"]["tests"], slot="arg1", kind="index", rule="read_alike"),
        "_SweAbsIndex(",
        ("    acc = start\n",
         "    if not isinstance(start, int):\n        raise TypeError(start)\n    acc = start\n"),
        tmp_path / "total", monkeypatch,
    )  # fmt: skip


def test_foreign_values_without_behaviour_are_pinned_where_unchanged_by_the_fix(
    jobs, tmp_path, monkeypatch
):
    """issue 27, thirteenth round: get_or() returns a value without behaviour as its default, as
    the code before the fix did: pinned (``unchanged``); a fix that takes a callable default for a
    factory calls it and fails."""
    tests = jobs["get_or"]["tests"]
    found = _emitted(tests, slot="arg2", kind="opaque", rule="unchanged")
    assert found and all("_SweAbsOpaque()" in t["test"] for t in found), tests
    factory = _mod_with("    return d[k] if k in d else default\n",
                        "    if k in d:\n        return d[k]\n"
                        "    return default() if callable(default) else default\n")  # fmt: skip
    failures = _failures(found, factory, tmp_path, monkeypatch)
    assert failures["gold"] == 0 and failures["wrong"] >= 1, failures
    # the mapping itself as such a value: ``in`` fails, before the fix too: some failure pinned
    assert all(t["rule"] != "unchanged" for t in _emitted(tests, slot="arg0")
               if t["kind"] in ("opaque", "no_truth")), tests  # fmt: skip


def test_foreign_path_like_texts_are_pinned_where_rejected_on_purpose(jobs, tmp_path, monkeypatch):
    """issue 27, thirteenth round (eleventh outside set): to_bytes() rejects a path-like object
    by its raise statement: pinned; a fix that reads it through ``os.fspath`` fails."""
    found = _emitted(jobs["to_bytes"]["tests"], slot="arg0", kind="pathlike", rule="explicit")
    assert found and "_SweAbsPath(" in found[0]["test"], jobs["to_bytes"]["tests"]
    fspath = _mod_with('    if isinstance(s, str):\n        return s.encode(encoding)\n',
                       '    if hasattr(s, "__fspath__"):\n        s = s.__fspath__()\n'
                       '    if isinstance(s, str):\n        return s.encode(encoding)\n')  # fmt: skip
    assert _failures(found, fspath, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}


def test_foreign_userstrings_are_pinned_only_where_rejected_on_purpose(jobs, tmp_path, monkeypatch):
    """issue 27, tenth round: to_bytes() rejects a UserString by its raise statement: pinned, and
    a duck-typed fix that encodes it fails. pick() returns on one as on the text: not pinned (a
    correct fix may return ``str`` or check the type)."""
    found = _emitted(jobs["to_bytes"]["tests"], slot="arg0", kind="userstring", rule="explicit")
    assert found and "_swe_abs_collections.UserString(" in found[0]["test"], jobs["to_bytes"]
    assert "pytest.raises(TypeError)" in found[0]["test"]
    duck = _mod_with('    if isinstance(s, str):\n        return s.encode(encoding)\n',
                       '    if hasattr(s, "encode"):\n        return s.encode(encoding)\n')  # fmt: skip
    assert _failures(found, duck, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}
    assert not _emitted(jobs["pick"]["tests"], kind="userstring"), jobs["pick"]["tests"]


def test_foreign_flags_as_integers_are_pinned_where_read_as_the_flag(jobs, tmp_path, monkeypatch):
    """issue 27, tenth round: label(n, short=1) is label(n, short=True); a fix that tests the
    flag with ``is True`` differs."""
    found = _emitted(jobs["label"]["tests"], slot="kw:short", kind="flag_1", rule="read_alike")
    assert found and all("short=1)" in t["test"] for t in found), jobs["label"]["tests"]
    assert _emitted(jobs["label"]["tests"], slot="kw:short", kind="flag_0", rule="read_alike")
    identity = _mod_with("return str(n) if short else", "return str(n) if short is True else")
    failures = _failures(found, identity, tmp_path, monkeypatch)
    assert failures["gold"] == 0 and failures["wrong"] >= 1, failures


def test_foreign_numbers_as_text_are_pinned_where_read_as_the_number(jobs, tmp_path, monkeypatch):
    """nth('5') is nth(5), in gold and before the fix: pinned. A fix that takes ints only fails
    them."""
    found = _emitted(jobs["nth"]["tests"], slot="arg0", kind="text", rule="read_alike")
    assert found, jobs["nth"]["tests"]
    index_only = _mod_with("    n = abs(int(n))", "    n = abs(__import__('operator').index(n))")
    failures = _failures(found, index_only, tmp_path, monkeypatch)
    assert failures == {"gold": 0, "wrong": len(found)}, failures


def test_foreign_values_read_alike_before_the_fix_pin_the_fixs_change_on_them(
    jobs, tmp_path, monkeypatch
):
    """Sixteenth round: nth('11') was nth(11) before the fix ('st' both) and is in gold ('th'
    both): the fix changed the declared outcome, and the tree before it read the text alike, so
    gold's outcome on the text is pinned; a fix that applies its rule to ints only fails it."""
    _pinned_and_failing_on(
        _emitted(jobs["teens"]["tests"], slot="arg0", kind="text", rule="read_alike"),
        "mod.nth('1",
        ("    n = abs(int(n))\n    if 11 <= n % 100 <= 13:\n",
         "    if isinstance(n, int) and 11 <= abs(n) % 100 <= 13:\n        return 'th'\n"
         "    n = abs(int(n))\n    if False:\n"),
        tmp_path, monkeypatch,
    )  # fmt: skip


def test_data_holding_none_is_pinned_where_the_fix_left_it_alone(jobs, tmp_path, monkeypatch):
    """Sixteenth round: a sequence whose first item is None (pairs()), a mapping whose first
    value is None (get_or()): gold returns what the tree before the fix returned (rule
    ``unchanged``), and a fix that takes None for "no more items" or "missing" fails."""
    _pinned_and_failing_on(
        _emitted(jobs["pairs"]["tests"], slot="arg0", kind="none_item", rule="unchanged"),
        "mod.pairs([None, ",
        ("    for a in it:\n        yield (a, next(it, None))\n",
         "    while (a := next(it, None)) is not None:\n        yield (a, next(it, None))\n"),
        tmp_path / "pairs", monkeypatch,
    )  # fmt: skip
    found = _emitted(jobs["get_or"]["tests"], slot="arg0", kind="none_item", rule="unchanged")
    assert found and all(": None}" in t["test"] for t in found), found
    missing = _mod_with("    return d[k] if k in d else default\n",
                        "    return d[k] if d.get(k) is not None else default\n")  # fmt: skip
    failures = _failures(found, missing, tmp_path / "get_or", monkeypatch)
    assert failures["gold"] == 0 and failures["wrong"] >= 1, failures  # where k is the None's key
    # every value None: the same fix fails wherever the key is in the mapping
    every = _emitted(jobs["get_or"]["tests"], slot="arg0", kind="none_items", rule="unchanged")
    assert every and all(": None" in t["test"] for t in every), jobs["get_or"]["tests"]
    assert _failures(every, missing, tmp_path / "every", monkeypatch)["gold"] == 0


def test_results_handed_out_to_every_caller_are_pinned_apart(jobs, tmp_path, monkeypatch):
    """Sixteenth round: unset() returns a fresh list on each call, as before the fix; a test
    calls it twice, emptying the first list in between (rule ``fresh_result``), and a fix that
    memoises the list (every caller shares one object) fails it."""
    _pinned_and_failing_on(
        _emitted(jobs["unset"]["tests"], kind="fresh_result", rule="fresh_result"),
        "(_swe_abs_spoil(mod.unset(cols, n)), mod.unset(cols, n))[1]",
        ("def unset(cols, n):\n",
         "def unset(cols, n):\n    return _unset(tuple(cols), n)\n\n\n"
         "@__import__('functools').lru_cache(maxsize=None)\ndef _unset(cols, n):\n"),
        tmp_path, monkeypatch,
    )  # fmt: skip
    # a generator hands out nothing mutable: no such test
    assert not _emitted(jobs["spans"]["tests"], rule="fresh_result"), jobs["spans"]["tests"]


def test_interpreter_wide_settings_are_pinned_as_gold_leaves_them(jobs, tmp_path, monkeypatch):
    """Sixteenth round: after nth(), the garbage collector, the integer-text digit limit and the
    like are as gold leaves them (rule ``settings``, one test a job); a fix that switches the
    collector off at import, for every module of the process, fails it."""
    import gc

    found = _emitted(jobs["nth"]["tests"], kind="settings", rule="settings")
    assert len(found) == 1 and "_swe_abs_settings())[1]" in found[0]["test"], found
    assert "'gc_enabled': True" in found[0]["test"] and "'int_max_str_digits': " in found[0]["test"]
    try:
        _pinned_and_failing_on(found, "mod.nth(n)", ("def nth(n):", "__import__('gc').disable()\n\n\ndef nth(n):"),
                               tmp_path, monkeypatch)  # fmt: skip
    finally:
        gc.enable()


def test_foreign_callables_failing_once_pin_the_callers_error(jobs, tmp_path, monkeypatch):
    """A key that raises KeyError on its first call comes through count_by(); a fix that catches
    KeyError around its own dict lookup and the caller's key alike, then calls again, returns a
    dict instead."""
    found = _emitted(jobs["count_by"]["tests"], slot="arg0", kind="failing_once_keyerror",
                     rule="propagated")  # fmt: skip
    assert found and "_SweAbsFailingCallable(KeyError, once=True)" in found[0]["test"], found
    eafp = _mod_with(
        "        k = key(x)\n        out[k] = out.get(k, 0) + 1\n",
        "        try:\n            out[key(x)] += 1\n        except KeyError:\n"
        "            out[key(x)] = 1\n",
    )
    assert _failures(found, eafp, tmp_path, monkeypatch) == {"gold": 0, "wrong": len(found)}


def test_foreign_unhashable_values_pin_what_gold_reads_alike(jobs, tmp_path, monkeypatch):
    """Fourteenth round: the subject as the same value of an unhashable subclass (nth's integer),
    or with its items so (total's sequence), is read alike by gold and before the fix; a fix
    that caches on the value (``functools.lru_cache``) or collects the items in a set fails."""
    found = _emitted(jobs["nth"]["tests"], slot="arg0", kind="unhashable", rule="read_alike")
    assert found and "_SweAbsUnhashableInt(" in found[0]["test"], jobs["nth"]["tests"]
    cached = _mod_with("def nth(n):", "@__import__('functools').lru_cache\ndef nth(n):")
    failures = _failures(found, cached, tmp_path / "nth", monkeypatch)
    assert failures == {"gold": 0, "wrong": len(found)}, failures
    items = _emitted(jobs["total"]["tests"], slot="arg0", kind="unhashable_items",
                     rule="read_alike")  # fmt: skip
    assert items and "_SweAbsUnhashableInt(" in items[0]["test"], jobs["total"]["tests"]
    # only the subject: `start` (the second argument) gets no unhashable value
    assert not _emitted(jobs["total"]["tests"], slot="arg1", kind="unhashable")
    in_a_set = _mod_with("    acc = start\n", "    acc = start\n    distinct = len(set(seq))\n")
    failures = _failures(items, in_a_set, tmp_path / "total", monkeypatch)
    assert failures == {"gold": 0, "wrong": len(items)}, failures


def test_foreign_labelled_texts_pin_what_gold_reads_alike(jobs, tmp_path, monkeypatch):
    """Seventeenth round: to_bytes()'s text as a ``str`` whose ``str()`` is a label (a member of
    an enumeration mixed with ``str``): gold encodes its value, as before the fix; a fix that
    "normalises" the text with ``str(s)`` first encodes the label and fails. Only the subject:
    get_or's key (its second argument) gets none."""
    _pinned_and_failing_on(
        _emitted(jobs["to_bytes"]["tests"], slot="arg0", kind="labelled", rule="read_alike"),
        "_SweAbsLabelled(",
        ("        return s.encode(encoding)\n", "        return str(s).encode(encoding)\n"),
        tmp_path, monkeypatch,
    )  # fmt: skip
    assert _emitted(jobs["get_or"]["tests"], slot="arg1", kind="opaque"), jobs["get_or"]["tests"]
    assert not _emitted(jobs["get_or"]["tests"], slot="arg1", kind="labelled")


def test_none_where_gold_returns_as_before_the_fix_is_pinned(jobs, tmp_path, monkeypatch):
    """Seventeenth round: get_or() returns a ``None`` default as the tree before the fix did
    (rule ``unchanged``); a fix that rejects a falsy argument it was never asked to check, or
    takes ``None`` for "no default", fails."""
    _pinned_and_failing_on(
        _emitted(jobs["get_or"]["tests"], slot="arg2", kind="none", rule="unchanged"),
        "mod.get_or(",
        ("    return d[k] if k in d else default\n",
         "    if not default and default != 0:\n        raise ValueError(default)\n"
         "    return d[k] if k in d else default\n"),
        tmp_path, monkeypatch,
    )  # fmt: skip


def _pinned_and_failing_on(
    tests: list[dict[str, Any]], code: str, wrong: tuple[str, str], tmp_path: Path, monkeypatch: Any
) -> None:
    """``tests`` are there, the first one's text has ``code``, and each passes on gold and fails
    on the module with ``wrong`` (old, new) in its place."""
    assert tests and code in tests[0]["test"], tests
    failures = _failures(tests, _mod_with(*wrong), tmp_path, monkeypatch)
    assert failures == {"gold": 0, "wrong": len(tests)}, failures


def test_foreign_integers_that_are_no_int_in_the_subject_pin_what_gold_reads_alike(
    jobs, tmp_path, monkeypatch
):
    """Fifteenth round: the column numbers of unset() as integers that are no int (NumPy's, to
    a list): gold indexes with them alike, a fix that checks ``isinstance(i, int)`` fails."""
    _pinned_and_failing_on(
        _emitted(jobs["unset"]["tests"], slot="arg0", kind="index_items", rule="read_alike"),
        "_SweAbsIndex(",
        ("    for i in cols:\n",
         "    for i in cols:\n        if not isinstance(i, int):\n            raise ValueError(i)\n"),
        tmp_path, monkeypatch,
    )  # fmt: skip


def test_a_failure_when_gold_is_read_is_pinned_as_such_where_only_some_exception_is(
    jobs, tmp_path, monkeypatch
):
    """Fifteenth round: spans() is a generator, so a size int() cannot read fails when it is
    read, as before the fix; the pinned failure (rule ``raised_before``, some exception) keeps
    that: a fix that validates at the call, before returning a generator, fails it."""
    _pinned_and_failing_on(
        _emitted(jobs["spans"]["tests"], slot="arg1", kind="opaque", rule="raised_before"),
        "_swe_abs_result = mod.spans(",
        ("    size = int(size)\n    for i",
         "    size = int(size)\n    return _spans(n, size)\n\n\ndef _spans(n, size):\n    for i"),
        tmp_path, monkeypatch,
    )  # fmt: skip


def test_foreign_values_replace_arguments_of_the_calls_an_example_reaches_only(jobs):
    """Fifteenth round: in ``a if flag else b`` only the branch the example takes is evaluated;
    a foreign value in the other would test nothing (and used the budget of its kind)."""
    r = jobs["branch"]
    for t in r["tests"]:
        line = next(x for x in t["test"].splitlines() if " if with_start else " in x)
        first_as_declared = re.search(r"[(=] ?mod\.total\(seq, start\) if with_start", line)
        second_as_declared = re.search(r"else mod\.total\(seq\)(\)|$)", line)
        if "with_start = True" in t["test"]:
            assert second_as_declared and not first_as_declared, t["test"]
        else:
            assert first_as_declared and not second_as_declared, t["test"]
    assert r["tests"] and r.get("unreached", 0) > 0, r


_WRONG_TOTALS = {
    "reads the sequence twice": ("    acc = start\n",
        "    if not list(seq):\n        return start\n    acc = start\n"),
    "returns start for a start it cannot add to": ("    for x in seq:\n        acc = acc + x\n",
        "    if not isinstance(start, int):\n        return start\n"
        "    for x in seq:\n        acc = acc + x\n"),
    "swallows the caller's error": ("    for x in seq:\n        acc = acc + x\n",
        "    try:\n        for x in seq:\n            acc = acc + x\n    except Exception:\n"
        "        pass\n"),
    "stops at the caller's error": ("    for x in seq:\n        acc = acc + x\n",
        "    it = iter(seq)\n    while True:\n        try:\n            x = next(it)\n"
        "        except Exception:\n            break\n        acc = acc + x\n"),
}  # fmt: skip


def _failures(
    tests: list[dict[str, Any]], wrong_source: str, tmp_path: Path, monkeypatch: Any
) -> dict[str, int]:
    """How many of the emitted ``tests`` fail, as pytest would run them, on the gold module
    (``gold``) and on ``wrong_source`` in its place (``wrong``)."""
    import sys

    from methods.swe_abs._jail.values import NORMALISE_SOURCE

    failures = {}
    for label, source in (("gold", MOD), ("wrong", wrong_source)):
        root = tmp_path / label
        (root / "pkg").mkdir(parents=True)
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "mod.py").write_text(source)
        monkeypatch.syspath_prepend(str(root))
        for name in [m for m in sys.modules if m == "pkg" or m.startswith("pkg.")]:
            monkeypatch.delitem(sys.modules, name)
        ns: dict[str, Any] = {"pytest": pytest}
        exec(NORMALISE_SOURCE, ns)
        failed = 0
        for t in tests:
            exec(t["test"], ns)
            name = t["test"].split("def ", 1)[1].split("(", 1)[0]
            try:
                ns[name]()
            except (AssertionError, pytest.fail.Exception, Exception):  # noqa: BLE001
                failed += 1
        failures[label] = failed
        monkeypatch.syspath_prepend(str(tmp_path))  # keep the order stable between rounds
    return failures


@pytest.mark.parametrize("wrong", sorted(_WRONG_TOTALS))
def test_foreign_tests_pass_on_gold_and_reject_wrong_fixes(jobs, tmp_path, monkeypatch, wrong):
    """The emitted tests as pytest runs them: every one passes on the gold module, and a wrong
    fix that changes a pinned rejection fails at least one."""

    old, new = _WRONG_TOTALS[wrong]
    failures = _failures(jobs["total"]["tests"], MOD.replace(old, new), tmp_path, monkeypatch)
    assert failures["gold"] == 0, failures
    assert failures["wrong"] >= 1, failures


# ------------------------------------------------------------------------------ near inputs
def _inputs(tests: list[dict[str, Any]]) -> list[Any]:
    """The input of each emitted test of a one-argument function, evaluated as the test module
    would."""

    from methods.swe_abs._jail.values import NORMALISE_SOURCE

    ns: dict[str, Any] = {}
    exec(NORMALISE_SOURCE, ns)
    return [eval(re.search(r"^    [sn] = (.+)$", t["test"], re.M).group(1), ns) for t in tests]


def _gold_function(name: str) -> Any:
    ns: dict[str, Any] = {}
    exec(MOD, ns)
    return ns[name]


_WRONG_NEAR = {
    "to_int": {
        "accepts any Unicode digit": lambda s: int(s) if s.isdigit() else None,
        "int() decides": lambda s: _int_or_none(s),
    },
    "humanize": {
        "strips every _id": lambda s: _strip_all(s, "_id").replace("_", " "),
        "strips -id too": lambda s: re.sub(r"[-_]id$", "", s).replace("_", " "),
    },
    "pick": {
        "a pattern with $": lambda s: s.upper() if re.match(r"^(legacy|modern)$", s)
        else _raise(ValueError("algorithm must be 'legacy' or 'modern'")),
    },
    "suffix": {
        "only 11-13 themselves": lambda n: "th" if n in (11, 12, 13)
        else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"),
        "misses 13": lambda n: "th" if 11 <= n % 100 <= 12
        else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th"),
    },
}  # fmt: skip


def _strip_all(s: str, end: str) -> str:
    while s.endswith(end):
        s = s[: -len(end)]
    return s


def _raise(exc: Exception) -> Any:
    raise exc


def _int_or_none(s: str) -> int | None:
    try:
        return int(s)
    except ValueError:
        return None


def _outcome(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(value)
    except Exception as exc:  # noqa: BLE001 - the exception type is the outcome
        return "raise", type(exc)


@pytest.mark.parametrize(
    ("job", "function"),
    [("near_int", "to_int"), ("near_suffix", "suffix"), ("near_humanize", "humanize"),
     ("near_pick", "pick")],
)  # fmt: skip
def test_near_inputs_reach_where_wrong_fixes_differ(jobs, job, function):
    """The declared domains (ASCII digit strings; 0-9; two words; the two names) never reach
    the inputs where these wrong fixes differ (full-width and superscript digits, ``1_0``, white
    space; 13, 111, 213; ``tag_id_id``, ``user-id``; ``legacy\\n``); the near tests do."""
    r = jobs[job]
    assert not r.get("error"), r
    gold = _gold_function(function)
    inputs = _inputs(r["tests"])
    assert inputs, r
    for label, wrong in _WRONG_NEAR[function].items():
        assert any(_outcome(wrong, v) != _outcome(gold, v) for v in inputs), (label, inputs)


def test_near_edits_are_kept_per_outcome_where_another_argument_decides_it(
    jobs, tmp_path, monkeypatch
):
    """issue 27, twelfth round: an upper-cased error handler's name fails (LookupError) only
    beside bytes that do not decode; one test per (argument, edit) kept whichever came first,
    often the one that decodes. Kept per outcome too, the failing one is there, and a fix that
    lower-cases the handler's name fails it."""
    r = jobs["near_decoded"]
    assert not r.get("error"), r
    edits = {t.get("edit") for t in r["tests"]}
    assert {"err: upper, returns", "err: upper, raises builtins.LookupError"} <= edits, edits
    lowered = MOD.replace(
        '    return data.decode("utf-8", errors)', '    return data.decode("utf-8", errors.lower())'
    )
    assert lowered != MOD
    failures = _failures(r["tests"], lowered, tmp_path, monkeypatch)
    assert failures["gold"] == 0 and failures["wrong"] >= 1, failures


def test_near_tests_pass_on_gold_and_reject_a_wrong_fix(jobs, tmp_path, monkeypatch):

    wrong_source = MOD.replace("if s.isascii() and s.isdigit():", "if s.isdigit():")
    failures = _failures(jobs["near_int"]["tests"], wrong_source, tmp_path, monkeypatch)
    assert failures["gold"] == 0 and failures["wrong"] >= 1, failures
