"""swe_abs: mutants judged per second, this project's engine vs mutmut 3.8 on toolz/itertoolz.py.

    .venv/bin/python bench/bench_mutants.py [--workers N] [--timeout-factor F]

Both run from one process, one after the other, on a copy of the toolz 1.2.0 sdist (from the
swe_abs set-up cache), on the same module:

- mutmut: ``mutmut run`` configured as in the anchor measurement (``only_mutate
  toolz/itertoolz.py``, its default of one worker per core), on the host (the bwrap jail has no
  /dev/shm, which mutmut's multiprocessing pool needs); wall time from the command's start to its
  end (generation, stats run, clean and forced-fail runs, every mutant);
- ours, in a warm bwrap sandbox: the mutants of ``methods.swe_abs.generate_mutants`` (mutmut's
  operator families) judged by the warm jail runner: one pytest collection, one coverage run with a context per test, then
  each mutant in a forked child with only the tests that execute its line, stopping at the first
  failure; a timeout of ``factor × the covering tests' clean time + 1 s``. Wall time from the
  start of mutant generation to the runner's end.

Printed: mutants/s of each, their ratio (goal ≥ 2), and the agreement of killed/survived
verdicts on the mutants both generate (matched by the mutated function's AST; a timeout counts
as killed, "no tests" as survived). The ratio counts only when the agreement is ≥ 99 %. Which
tests each tool ran per mutant: mutmut the tests its stats run recorded for the mutated function,
ours the tests that execute the mutated line (import-time lines — def headers with their
defaults — count as executed by every test, as the swe_abs pipeline counts them); ``--report
FILE`` writes them per shared mutant (JSON), and the summary prints the mean per mutant.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

MODULE = "toolz/itertoolz.py"
GOAL = 2.0
AGREEMENT_GOAL = 0.99
MUTMUT_CONFIG = """
[tool.mutmut]
source_paths = ["toolz/", "tlz/"]
only_mutate = ["toolz/itertoolz.py"]
pytest_add_cli_args_test_selection = ["toolz/tests"]
also_copy = ["toolz.egg-info"]
"""
_KILLED = {1, 3, 36, -24, 24, 152, 255}  # mutmut: killed, and its timeout codes
_SURVIVED = {0, 5, 33}  # survived, and "no tests"


def _key(func: ast.FunctionDef, name: str) -> str:
    func.name = name
    return ast.dump(func)


async def _sandbox(site: str):  # type: ignore[no-untyped-def]
    from sandboxes.bwrap import BwrapConfig, BwrapSandboxEnvironment

    cfg = BwrapConfig(ro_binds=[site], memory_mb=3072, max_processes=512, timeout_s=3600)
    envs = await BwrapSandboxEnvironment.sample_init("bench_mutants", cfg, {})
    return cfg, envs, envs["default"]


def run_mutmut(files: dict[str, bytes], workers: int | None) -> dict[str, Any]:
    """mutmut on the host, in a temporary copy of the sdist: it cannot run in the bwrap jail,
    whose minimal /dev has no /dev/shm for multiprocessing's semaphores (its Pool fails with
    PermissionError). It is the reference tool, run on the released toolz as in the anchor
    measurement; our engine, in the sandbox, pays the sandbox's overhead on top."""
    import shutil
    import subprocess
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="bench-mutmut-"))
    try:
        tree = dict(files)
        tree["pyproject.toml"] = tree.get("pyproject.toml", b"") + MUTMUT_CONFIG.encode()
        for rel, data in tree.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        cmd = [sys.executable, "-m", "mutmut", "run"]
        if workers:
            cmd += ["--max-children", str(workers)]
        started = time.perf_counter()
        res = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=3000)
        wall = time.perf_counter() - started
        meta_path = root / "mutants" / f"{MODULE}.meta"
        if not meta_path.exists():
            raise RuntimeError(f"mutmut failed ({res.returncode}): {res.stderr[-2000:]}")
        meta = json.loads(meta_path.read_text())
        mutated = (root / "mutants" / MODULE).read_text()
        stats_path = root / "mutants" / "mutmut-stats.json"
        stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    tests_by = stats.get("tests_by_mangled_function_name") or {}
    verdicts: dict[str, str] = {}
    tests: dict[str, list[str]] = {}
    for node in ast.parse(mutated).body:
        if isinstance(node, ast.FunctionDef):
            m = re.match(r"x_(.*)__mutmut_(\d+)$", node.name)
            if not m:
                continue
            code = meta["exit_code_by_key"].get(f"toolz.itertoolz.{node.name}")
            verdict = "killed" if code in _KILLED else "survived" if code in _SURVIVED else "other"
            key = _key(node, m.group(1))
            verdicts[key] = verdict
            tests[key] = sorted(tests_by.get(f"toolz.itertoolz.x_{m.group(1)}", []))
    return {"wall": wall, "verdicts": verdicts, "tests": tests, "n": len(meta["exit_code_by_key"])}


async def run_ours(files: dict[str, bytes], site: str, factor: float) -> dict[str, Any]:
    from methods.swe_abs import (
        RUNNER_SOURCE,
        RunnerEnv,
        generate_mutants,
        static_executed,
        tar_files,
    )
    from sandboxes.bwrap import BwrapSandboxEnvironment

    cfg, envs, box = await _sandbox(site)
    try:
        await box.write_file("/workspace/t.tar", tar_files(files, "toolz"))
        await box.exec(["tar", "xf", "t.tar"], cwd="/workspace")
        await box.write_file("/workspace/runner.py", RUNNER_SOURCE)
        env = RunnerEnv(pythonpath=(site,)).environment()
        started = time.perf_counter()
        source = files[MODULE].decode()
        mutants = generate_mutants(MODULE, source)
        import_time = static_executed(source)
        jobs: list[dict[str, Any]] = [
            {"id": "gold", "kind": "tests", "coverage": True, "durations": True, "timeout": 300}
        ]
        for m in mutants:
            jobs.append(
                {
                    "id": m.id,
                    "kind": "tests",
                    "variant": m.variant(),
                    "stop_first": True,
                    "timeout": 60,
                    "select_from": {
                        "job": "gold",
                        "lines": {MODULE: [m.line]},
                        "import_time": {
                            MODULE: sorted(import_time | ({m.line} if m.in_signature else set()))
                        },
                        "timeout_factor": factor,
                        "timeout_base": 1.0,
                    },
                }
            )
        plan = {
            "repo": "/workspace/toolz",
            "sys_path": ["/workspace/toolz"],
            "test_files": ["toolz/tests"],
            "target_files": [MODULE],
            "pytest_args": ["--tb=native"],
            "jobs": jobs,
            "result_path": "/workspace/result.json",
        }
        await box.write_file("/workspace/plan.json", json.dumps(plan))
        res = await box.exec(
            ["python3", "runner.py", "plan.json"], cwd="/workspace", env=env, timeout=3000
        )
        wall = time.perf_counter() - started
        if res.returncode != 0:
            raise RuntimeError(f"runner failed: {res.stderr[-2000:]}")
        result = json.loads(await box.read_file("/workspace/result.json"))
    finally:
        await BwrapSandboxEnvironment.sample_cleanup("bench_mutants", cfg, envs, False)
    verdicts: dict[str, str] = {}
    tests: dict[str, list[str]] = {}
    timeouts = no_tests = 0
    for m in mutants:
        r = result["jobs"][m.id]
        killed = r.get("timed_out") or any(
            s in ("FAILED", "ERROR") for s in (r.get("status") or {}).values()
        )
        timeouts += bool(r.get("timed_out"))
        no_tests += bool(r.get("no_tests"))
        for node in ast.parse(m.source).body:
            if isinstance(node, ast.FunctionDef) and node.name == m.function:
                key = _key(node, m.function)
                verdicts[key] = "killed" if killed else "survived"
                tests[key] = list(r.get("ran") or [])
    return {
        "wall": wall,
        "verdicts": verdicts,
        "tests": tests,
        "n": len(mutants),
        "timeouts": timeouts,
        "no_tests": no_tests,
    }


def _tests_ran(
    theirs: dict[str, Any], ours: dict[str, Any], shared: list[str], report: str | None
) -> None:
    """Which tests each tool ran per shared mutant: the means, and (``report``) every mutant."""
    rows = []
    for k in shared:
        a, b = theirs["tests"].get(k, []), ours["tests"].get(k, [])
        # mutmut names tests by node id without the "toolz/tests/" root our runner collects
        a_set, b_set = {t.rsplit("/", 1)[-1] for t in a}, {t.rsplit("/", 1)[-1] for t in b}
        rows.append({"mutant": k[:200], "verdict_mutmut": theirs["verdicts"][k],
                     "verdict_ours": ours["verdicts"][k], "tests_mutmut": a, "tests_ours": b,
                     "same_tests": a_set == b_set})  # fmt: skip
    n = len(rows) or 1
    print(
        f"tests run per mutant: mutmut {sum(len(r['tests_mutmut']) for r in rows) / n:.1f}, "
        f"ours {sum(len(r['tests_ours']) for r in rows) / n:.1f} (ours stops at the first "
        f"failure); the same test set on {sum(r['same_tests'] for r in rows)}/{len(rows)} mutants"
    )
    if report:
        Path(report).write_text(json.dumps(rows, indent=1))
        print(f"per-mutant tests and verdicts: {report}")


async def main(args: argparse.Namespace) -> int:
    from sandboxes.bwrap import bwrap_problem
    from tasks.swe_abs.fetch import SetupMissingError, require_site
    from tasks.swe_abs.sdist_tree import sdist_files

    problem = bwrap_problem()
    if problem is not None:
        print(f"SKIP: {problem}")
        return 0
    try:
        site = str(require_site())
        files = dict(sdist_files("toolz==1.2.0"))
    except SetupMissingError as exc:
        print(f"SKIP: {exc}")
        return 0
    print(f"mutmut 3.8.1 on {MODULE} (host: no /dev/shm in the jail) ...", flush=True)
    theirs = run_mutmut(files, args.workers)
    print(f"ours on {MODULE} (bwrap, warm jail runner) ...", flush=True)
    ours = await run_ours(files, site, args.timeout_factor)
    rate_theirs = theirs["n"] / theirs["wall"]
    rate_ours = ours["n"] / ours["wall"]
    shared = set(theirs["verdicts"]) & set(ours["verdicts"])
    agree = sum(theirs["verdicts"][k] == ours["verdicts"][k] for k in shared)
    agreement = agree / len(shared) if shared else 0.0
    ratio = rate_ours / rate_theirs
    print(f"mutmut : {theirs['n']} mutants in {theirs['wall']:.1f} s = {rate_theirs:.2f} mutants/s")
    print(
        f"ours   : {ours['n']} mutants in {ours['wall']:.1f} s = {rate_ours:.2f} mutants/s "
        f"({ours['timeouts']} timeouts, {ours['no_tests']} without covering tests)"
    )
    print(
        f"shared mutants: {len(shared)}; verdicts agree on {agree} = {agreement:.1%} "
        f"(goal ≥ {AGREEMENT_GOAL:.0%})"
    )
    only_theirs = sum(
        theirs["verdicts"][k] == "killed" and ours["verdicts"][k] == "survived" for k in shared
    )
    only_ours = sum(
        theirs["verdicts"][k] == "survived" and ours["verdicts"][k] == "killed" for k in shared
    )
    print(f"  killed by mutmut only: {only_theirs}; killed by ours only: {only_ours}")
    _tests_ran(theirs, ours, sorted(shared), args.report)
    counts = agreement >= AGREEMENT_GOAL
    print(
        f"RATIO ours/mutmut = {ratio:.2f} (goal ≥ {GOAL}); "
        + ("counts: verdicts agree" if counts else "does NOT count: verdicts disagree too often")
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=None, help="mutmut --max-children")
    parser.add_argument("--timeout-factor", type=float, default=10.0)
    parser.add_argument("--report", default=None, help="write per-mutant tests/verdicts (JSON)")
    raise SystemExit(asyncio.run(main(parser.parse_args())))
