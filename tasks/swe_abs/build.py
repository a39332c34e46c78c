"""Build the offline instances (``data/instances.jsonl``) from the hand-written specs.

    .venv/bin/python -m tasks.swe_abs.build [--only ID,...] [--check]

A spec (``specs/<project>.yaml``) names a real function of a pinned sdist, the function as it was
*before* the fix (the bug, written by hand), the issue text, and candidate patches written by
hand (whole function definitions: at least one correct re-implementation and two wrong ones).
The fix (gold patch) is the sdist's own code. The builder runs the project's own test file in the
bwrap sandbox on the gold and the base code and derives, as SWE-bench does:

- FAIL_TO_PASS: tests that fail before the fix and pass after it; their test functions move
  from the base tree into ``test_patch`` (the tests that came with the fix);
- PASS_TO_PASS: the other tests of those test files that pass before and after;
- ``removed_tests``: tests a spec takes out of the suite (a weakened suite; listed, with the
  patch that restores them, so the report can say how much of them the new tests recover).

Each record also carries ``base_setup_patch`` (sdist → base commit) so the task rebuilds the base
tree from the cached sdist alone. ``--check`` rebuilds in memory and fails if the file differs.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from methods.swe_abs import (
    RUNNER_SOURCE,
    RunnerEnv,
    apply_patch,
    instance_from_record,
    make_patch,
    replace_functions,
    tar_files,
)
from tasks.swe_abs.fetch import require_site, sdist_archive
from tasks.swe_abs.sdist_tree import sdist_digest, sdist_files

HERE = Path(__file__).resolve().parent
SPEC_DIR = HERE / "specs"
DOMAINS_FILE = "domains.yaml"  # documented domains per argument, not a project spec
OUT = HERE / "data" / "instances.jsonl"
EQUIVALENCE_EXAMPLES = 3000


class SpecError(ValueError):
    pass


def resolve_names(source: str, names: list[str]) -> list[str]:
    """Test names with inherited methods resolved to the class that defines them
    ("TestSub.test_x" → "TestBase.test_x" when TestSub inherits it)."""
    tree = ast.parse(source)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def defining(cls: str, method: str) -> str | None:
        node = classes.get(cls)
        if node is None:
            return None
        if any(getattr(i, "name", None) == method for i in node.body):
            return cls
        for base in node.bases:
            if isinstance(base, ast.Name):
                found = defining(base.id, method)
                if found:
                    return found
        return None

    out = set()
    for name in names:
        if "." in name:
            cls, _, method = name.partition(".")
            out.add(f"{defining(cls, method) or cls}.{method}")
        else:
            out.add(name)
    return sorted(out)


def remove_functions(source: str, names: list[str]) -> tuple[str, list[str]]:
    """Drop module-level test functions or class methods named in ``names`` ("test_x" or
    "TestClass.test_x", inherited methods resolved); returns (new source, names removed)."""
    tree = ast.parse(source)
    names = resolve_names(source, names)
    spans: list[tuple[int, int, str]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            spans.append((first, node.end_lineno or node.lineno, node.name))
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                qual = f"{node.name}.{getattr(item, 'name', '')}"
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and qual in names:
                    first = item.decorator_list[0].lineno if item.decorator_list else item.lineno
                    spans.append((first, item.end_lineno or item.lineno, qual))
    lines = source.splitlines(keepends=True)
    for first, last, _ in sorted(spans, reverse=True):
        # take the blank lines after the function with it
        while last < len(lines) and not lines[last].strip():
            last += 1
        del lines[first - 1 : last]
    return "".join(lines), [n for _, _, n in spans]


def function_of(nodeid: str) -> str:
    """``path::Class::test_x[param]`` → ``Class.test_x``."""
    parts = nodeid.split("::")[1:]
    name = ".".join(parts)
    return name.split("[", 1)[0]


async def _run_tests(
    files: dict[str, bytes],
    sys_path: list[str],
    test_files: list[str],
    variants: dict[str, Any],
    spec: dict[str, Any] | None = None,
    equivalence: dict[str, Any] | None = None,
) -> dict[str, Any]:
    from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment

    site = require_site()
    env = RunnerEnv(pythonpath=(str(site),))
    cfg = BwrapConfig(ro_binds=[str(site)], memory_mb=2048, timeout_s=600)
    envs = await BwrapSandboxEnvironment.sample_init("swe_abs_build", cfg, {})
    box = envs["default"]
    try:
        await box.write_file("/workspace/tree.tar", tar_files(files, "repo"))
        await box.exec(["tar", "xf", "tree.tar"], cwd="/workspace")
        await box.write_file("/workspace/runner.py", RUNNER_SOURCE)
        jobs = [{"id": "gold", "kind": "tests", "timeout": 300, "details": True}]
        jobs += [
            {"id": k, "kind": "tests", "variant": v, "timeout": 300, "details": True}
            for k, v in variants.items()
        ]
        # a correct candidate must agree with the gold patch on the whole input domain
        jobs += [
            {
                "id": k,
                "kind": "differential",
                "variant": v,
                "spec": spec,
                "max_examples": EQUIVALENCE_EXAMPLES,
                "timeout": 600,
            }
            for k, v in (equivalence or {}).items()
        ]
        plan = {
            "repo": "/workspace/repo",
            "sys_path": ["/workspace/repo" + ("" if p == "." else "/" + p) for p in sys_path],
            "test_files": test_files,
            "target_files": [],
            "pytest_args": ["--tb=short"],
            "jobs": jobs,
            "result_path": "/workspace/result.json",
        }
        await box.write_file("/workspace/plan.json", json.dumps(plan))
        res = await box.exec(
            ["python3", "runner.py", "plan.json"],
            cwd="/workspace",
            env=env.environment(),
            timeout=900,
        )
        if res.returncode != 0:
            raise SpecError(f"runner failed: {res.stderr[-2000:]}")
        out: dict[str, Any] = json.loads(await box.read_file("/workspace/result.json"))
        return out
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("swe_abs_build", cfg, envs, False)


def load_domains() -> dict[str, dict[str, dict[str, list[str]]]]:
    """``specs/domains.yaml``: per instance, per argument of its differential, what its
    documentation settles: ``kinds`` of near input and ``values`` (Python literals as text)
    (instance → argument → {kinds, values}; the ``because`` quotes stay in the file)."""
    path = SPEC_DIR / DOMAINS_FILE
    if not path.exists():
        return {}
    doc = yaml.safe_load(path.read_text()) or {}
    return {
        inst: {
            arg: {
                "kinds": list(entry.get("kinds") or []),
                "values": [str(v) for v in entry.get("values") or []],
            }
            for arg, entry in args.items()
        }
        for inst, args in doc.items()
    }


def with_domains(
    differential: dict[str, Any] | None, documented: dict[str, dict[str, list[str]]]
) -> Any:
    """The differential with its documented domains: ``domains`` (argument → kinds) and
    ``domain_values`` (argument → literals), for the arguments that have any."""
    if not differential:
        return differential
    kinds = {arg: e["kinds"] for arg, e in documented.items() if e.get("kinds")}
    values = {arg: e["values"] for arg, e in documented.items() if e.get("values")}
    return {
        **differential,
        **({"domains": kinds} if kinds else {}),
        **({"domain_values": values} if values else {}),
    }


def _load_specs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    domains = load_domains()
    for path in sorted(SPEC_DIR.glob("*.yaml")):
        if path.name == DOMAINS_FILE:
            continue
        doc = yaml.safe_load(path.read_text())
        for inst in doc["instances"]:
            inst = {**inst, "differential": with_domains(inst.get("differential"),
                                                         domains.get(inst["id"], {}))}  # fmt: skip
            out.append((doc, inst))
    return out


async def build_one(project: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    req = project["sdist"]
    where = f"spec {spec['id']}"
    sdist = dict(sdist_files(req))
    texts = {p: d.decode("utf-8") for p, d in sdist.items() if p.endswith(".py")}
    env_fix = {}
    for path, subs in (project.get("environment_fix") or {}).items():
        text = texts[path]
        for old, new in subs:
            if old not in text:
                raise SpecError(f"{where}: environment fix {old!r} not found in {path}")
            text = text.replace(old, new)
        env_fix[path] = text
    texts.update(env_fix)
    src_path, test_path = spec["file"], spec["test_file"]
    upstream = texts[src_path]
    if "gold_patch" in spec:  # a real upstream fix given as a diff (flask-5014): base = reversed
        gold_text = upstream
        reversed_src = apply_patch({src_path: upstream}, _reverse(spec["gold_patch"]))[src_path]
        if reversed_src is None:
            raise SpecError(f"{where}: the gold patch does not reverse onto {src_path}")
        base_src: str = reversed_src
        tests_full = texts[test_path]
        base_tests_full = None  # the fix's test is found like any other F2P test and moved
    else:
        replaced, note = replace_functions(
            upstream, _qualified(spec["bug"], spec.get("function", ""))
        )
        if replaced is None:
            raise SpecError(f"{where}: the bug does not replace a function: {note}")
        base_src = replaced
        gold_text = upstream
        tests_full = texts[test_path]
        if spec.get("new_tests"):  # the issue's own tests, added by the test patch
            tests_full = tests_full.rstrip("\n") + "\n\n\n" + spec["new_tests"].strip("\n") + "\n"
        base_tests_full = None
    if base_src == gold_text:
        raise SpecError(f"{where}: the bug changes nothing")
    cand_texts = {}
    for cand in spec["candidates"]:
        cand_text, note = replace_functions(
            base_src, _qualified(cand["code"], spec.get("function", ""))
        )
        if cand_text is None:
            raise SpecError(f"{where}: candidate {cand['system']}: {note}")
        cand_texts[cand["system"]] = cand_text
    # one sandbox run: the full upstream tests on gold, base and every candidate
    tree = {**sdist, **{p: t.encode() for p, t in env_fix.items()}, test_path: tests_full.encode()}
    variants = {"base": {"files": {src_path: base_src}}}
    variants.update({f"cand:{k}": {"files": {src_path: v}} for k, v in cand_texts.items()})
    checks = {}
    if spec.get("differential"):
        for c in spec["candidates"]:
            if c["kind"] == "correct":
                checks[f"equiv:{c['system']}"] = {"files": {src_path: cand_texts[c["system"]]}}
    result = await _run_tests(
        tree,
        project.get("sys_path", ["."]),
        [test_path],
        variants,
        spec.get("differential"),
        checks,
    )
    if result["collect_errors"]:
        raise SpecError(f"{where}: collection errors: {result['collect_errors']}")
    jobs = result["jobs"]
    for key in checks:
        found = jobs[key]
        if found.get("error") or found.get("timed_out"):
            raise SpecError(f"{where}: equivalence check {key} failed to run: {found}")
        if found.get("disagreement"):
            raise SpecError(f"{where}: {key} differs from the fix: {found['disagreement']}")
    gold, base = jobs["gold"]["status"], jobs["base"]["status"]
    bad_gold = [t for t, s in gold.items() if s in ("FAILED", "ERROR")]
    if bad_gold:
        raise SpecError(f"{where}: upstream tests fail on the sdist itself: {bad_gold[:5]}")
    f2p_all = sorted(
        t for t, s in gold.items() if s == "PASSED" and base.get(t) in ("FAILED", "ERROR", None)
    )
    if base_tests_full is not None:  # given test patch: F2P = its tests that fail on base
        added = set(gold) - set(_collectable(base_tests_full, gold))
        f2p_all = sorted(t for t in f2p_all if t in added) or f2p_all
    if not f2p_all:
        raise SpecError(f"{where}: no upstream test fails on the bug; write a bug the tests see")
    removed = list(spec.get("removed_tests") or [])
    new_names = []
    if spec.get("new_tests"):
        new_names = [
            n.name for n in ast.parse(spec["new_tests"]).body if isinstance(n, ast.FunctionDef)
        ]
    moved = sorted({function_of(t) for t in f2p_all} - set(removed) | set(new_names))
    if base_tests_full is None:
        base_tests, got = remove_functions(tests_full, moved + removed)
        missing = {n for n in moved + removed if "." not in n and n not in got}
        if missing:
            raise SpecError(f"{where}: tests not found for removal: {sorted(missing)}")
        post_tests, _ = remove_functions(tests_full, removed)
    else:
        base_tests = base_tests_full
        post_tests = tests_full

    # ids after the test patch, excluding removed tests
    removed_resolved = set(resolve_names(tests_full, removed))

    def kept(t: str) -> bool:
        return resolve_names(tests_full, [function_of(t)])[0] not in removed_resolved

    f2p = [t for t in f2p_all if kept(t)]
    p2p = sorted(
        t
        for t, s in gold.items()
        if kept(t) and t not in f2p and s == "PASSED" and base.get(t) == "PASSED"
    )
    removed_ids = sorted(t for t in gold if not kept(t))
    # candidates' behaviour on the instance's (post-test-patch) suite, for the spec author
    cand_report = {}
    for system in cand_texts:
        st = jobs[f"cand:{system}"]["status"]
        cand_report[system] = {
            "fails_instance_tests": sorted(
                t for t in f2p + p2p if st.get(t) not in ("PASSED", "XFAIL", "SKIPPED")
            ),
            "fails_removed_tests": sorted(
                t for t in removed_ids if st.get(t) in ("FAILED", "ERROR")
            ),
        }
    setup_files = {**env_fix, src_path: base_src, test_path: base_tests}
    setup_patch = "".join(
        make_patch(p, _sdist_text(sdist, p), t) for p, t in sorted(setup_files.items())
    )
    patch = make_patch(src_path, base_src, gold_text)
    test_patch = make_patch(test_path, base_tests, post_tests)
    removed_patch = make_patch(test_path, post_tests, tests_full) if removed else ""
    record: dict[str, Any] = {
        "instance_id": spec["id"],
        "repo": project["repo"],
        "base_commit": f"sdist:{req}",
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": spec["problem_statement"].strip() + "\n",
        "hints_text": "",
        "created_at": "",
        "version": req.split("==")[1],
        "FAIL_TO_PASS": json.dumps(f2p),
        "PASS_TO_PASS": json.dumps(p2p),
        "environment_setup_commit": "",
        "candidates": [
            {
                "system": system,
                "kind": c["kind"],
                "note": f"{c['system']}: {c.get('note', 'a re-implementation of the fix')}",
                "trusted": True,
                "patch": make_patch(src_path, base_src, cand_texts[c["system"]]),
            }
            for system, c in zip(
                canonical_systems(spec["candidates"]), spec["candidates"], strict=True
            )
        ],
        "removed_tests": removed_ids,
        "removed_tests_patch": removed_patch,
        "sys_path": project.get("sys_path", ["."]),
        "differential": spec.get("differential"),
        "base_setup_patch": setup_patch,
        "sdist_sha256": sdist_digest(req),
        "source": spec.get("source", "hand-written bug; gold = the sdist's own code"),
        "function": spec.get("function", ""),
        "build_report": cand_report,
    }
    instance_from_record(record, where=where)  # the record must load
    return record


def canonical_systems(candidates: list[dict[str, Any]]) -> list[str]:
    """Leaderboard rows shared by all instances: hand_correct[_n], hand_wrong_1, hand_wrong_2, …
    (the spec's own label stays in the candidate's note)."""
    out, seen = [], {"correct": 0, "wrong": 0}
    n_correct = sum(c["kind"] == "correct" for c in candidates)
    for c in candidates:
        seen[c["kind"]] += 1
        if c["kind"] == "correct":
            out.append("hand_correct" if n_correct == 1 else f"hand_correct_{seen['correct']}")
        else:
            out.append(f"hand_wrong_{seen['wrong']}")
    return out


def _qualified(code: str, function: str) -> str:
    """A method's code wrapped in its class, so it replaces that class's method only."""
    if "." not in function:
        return code
    cls = function.split(".")[0]
    body = "".join("    " + line if line.strip() else line for line in code.splitlines(True))
    return f"class {cls}:\n{body}"


def _sdist_text(sdist: dict[str, bytes], path: str) -> str:
    return sdist[path].decode("utf-8") if path in sdist else ""


def _collectable(source: str, known: dict[str, str]) -> list[str]:
    names = set()
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    names.add(f"{node.name}.{item.name}")
    return [t for t in known if function_of(t) in names]


def _reverse(patch: str) -> str:
    out = []
    for line in patch.splitlines(keepends=True):
        if line.startswith("--- "):
            out.append("+++ " + line[4:])
        elif line.startswith("+++ "):
            out.append("--- " + line[4:])
        elif line.startswith("@@"):
            import re

            m = re.match(r"@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)", line)
            assert m
            out.append(f"@@ -{m.group(2)} +{m.group(1)} @@{m.group(3)}\n")
        elif line.startswith("+"):
            out.append("-" + line[1:])
        elif line.startswith("-"):
            out.append("+" + line[1:])
        else:
            out.append(line)
    # a reversed hunk lists additions before removals: order is irrelevant to the applier
    text = "".join(out)
    # fix header order (--- must precede +++)
    lines = text.splitlines(keepends=True)
    for i in range(len(lines) - 1):
        if lines[i].startswith("+++ ") and lines[i + 1].startswith("--- "):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
    return "".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated instance ids")
    parser.add_argument("--check", action="store_true", help="fail if the file would change")
    args = parser.parse_args(argv)
    only = {x for x in args.only.split(",") if x}
    existing: dict[str, dict[str, Any]] = {}
    if OUT.exists():
        for line in OUT.read_text().splitlines():
            if line.strip():
                rec = json.loads(line)
                existing[rec["instance_id"]] = rec
    records = dict(existing)
    specs = _load_specs()
    ids = [s["id"] for _, s in specs]
    for project, spec in specs:
        if only and spec["id"] not in only:
            continue
        sdist_archive(project["sdist"])
        rec = asyncio.run(build_one(project, spec))
        records[spec["id"]] = rec
        if not args.check:  # keep what is built so far
            OUT.parent.mkdir(parents=True, exist_ok=True)
            OUT.write_text(
                "".join(json.dumps(records[i], sort_keys=True) + "\n" for i in ids if i in records)
            )
        rep = rec["build_report"]
        n_f2p = len(json.loads(rec["FAIL_TO_PASS"]))
        n_p2p = len(json.loads(rec["PASS_TO_PASS"]))
        print(f"{spec['id']}: F2P {n_f2p}, P2P {n_p2p}, removed {len(rec['removed_tests'])}")
        for system, r in rep.items():
            print(
                f"   {system}: fails {len(r['fails_instance_tests'])} instance tests "
                f"{r['fails_instance_tests'][:3]}, {len(r['fails_removed_tests'])} removed"
            )
    ordered = [records[i] for i in ids if i in records]
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in ordered)
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {len(ordered)} instances to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
