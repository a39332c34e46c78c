"""The stress workloads: each sample is one agent workload — a list of tool calls (operations) and
what each must give — either well-behaved work or a planted fault followed by a check that the
sample's sandbox still works.

The dataset is generated (seeded), not read: `stress_dataset(samples, kinds, limits, seed)` cycles
through the kinds so any number of samples mixes them evenly.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from inspect_ai.dataset import Sample

WELL_BEHAVED = ("build_test", "file_io", "background_jobs")
FAULTS = (
    "fork_bomb",
    "memory_hog",
    "runaway_loop",
    "output_flood",
    "ignore_sigterm",
    "network",
    "killed_mid_command",
)
KINDS = WELL_BEHAVED + FAULTS
TAG_ENV = "AGENT_STRESS_TAG"
"""Every command of the task runs with this variable set to its operation's unique tag, so the
host can find (and count, and kill) its processes whatever the sandbox."""
PORT_ENV = "AGENT_STRESS_HOST_PORT"
"""The port of a listener on the host's 127.0.0.1 that the network fault tries to reach."""
KILL_MARKER = "4711.25"  # the command the outside kill waits for (killed_mid_command)

Expect = Literal["ok", "fault", "background"]


@dataclass(frozen=True)
class Limits:
    """The limits the sandbox is configured with, which the faults are sized against."""

    memory_mb: int = 256
    max_processes: int = 64
    fault_timeout_s: int = 4
    op_timeout_s: int = 60


@dataclass(frozen=True)
class Op:
    """One tool call of a workload and what it must give.

    expect: "ok" (success, `stdout_has` in its output, or for read_file `sha256` of the content),
    "fault" (the planted fault: judged by the workload's containment rule), "background" (starts
    processes that must outlive the call and be reaped at sample cleanup).
    """

    tool: Literal["bash", "write_file", "read_file"]
    arguments: dict[str, Any]
    expect: Expect = "ok"
    stdout_has: str | None = None
    sha256: str | None = None
    check_leftovers: bool = False
    """After the call, no process of it may remain (checked from the host, by its tag)."""
    kill_from_outside: bool = False
    """The harness SIGKILLs the command's processes from the host while it runs."""
    extra: dict[str, Any] = field(default_factory=dict)

    def call(self) -> dict[str, Any]:
        return {"function": self.tool, "arguments": dict(self.arguments)}


def _bash(cmd: str, timeout: int, **kw: Any) -> Op:
    return Op("bash", {"cmd": cmd, "timeout": timeout}, **kw)


def _alive(limits: Limits) -> Op:
    """The check after every fault: the sample's sandbox still runs commands."""
    return _bash("echo alive", limits.op_timeout_s, stdout_has="alive")


_CALC = '''"""A small module to build and test."""


def add(a, b):
    return a + b


def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)
'''

_TEST_CALC = """import unittest

from calc import add, mean


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_mean(self):
        self.assertEqual(mean([1, 2, 3, 6]), 3)

    def test_mean_empty(self):
        with self.assertRaises(ValueError):
            mean([])


if __name__ == "__main__":
    unittest.main()
"""

_NETWORK = """
import os, socket, sys
tag = os.environ.get("AGENT_STRESS_TAG", "")
for host, port in (("127.0.0.1", int(os.environ["AGENT_STRESS_HOST_PORT"])), ("1.1.1.1", 53)):
    try:
        with socket.create_connection((host, port), timeout=3) as s:
            s.sendall(tag.encode() + b"\\n")
        print("CONNECTED", host)
    except OSError as ex:
        print("FAILED", host, type(ex).__name__)
"""


def workload(kind: str, limits: Limits, rng: random.Random) -> list[Op]:
    """The operations of one sample of `kind`."""
    t, ft = limits.op_timeout_s, limits.fault_timeout_s
    if kind == "build_test":
        return [
            Op("write_file", {"path": "project/src/calc.py", "content": _CALC}),
            Op("write_file", {"path": "project/tests/test_calc.py", "content": _TEST_CALC}),
            _bash(
                "cd project && python3 -m compileall -q src && echo BUILT", t, stdout_has="BUILT"
            ),  # fmt: skip
            _bash(
                "cd project && PYTHONPATH=src python3 -m unittest discover -s tests 2>&1;"
                " echo rc=$?",
                t,
                stdout_has="rc=0",
            ),  # fmt: skip
            _bash("ls project/src/__pycache__ | grep -c '^calc'", t, stdout_has="1"),
        ]
    if kind == "file_io":
        ops: list[Op] = []
        digests = []
        for i in range(6):
            text = "".join(rng.choice("abcdefghij \n") for _ in range(rng.randint(200, 4000)))
            digest = hashlib.sha256(text.encode()).hexdigest()
            digests.append((f"data/f{i}.txt", digest))
            ops.append(Op("write_file", {"path": f"data/f{i}.txt", "content": text}))
        ops.append(_bash("sha256sum data/*.txt", t, stdout_has=digests[0][1]))
        ops += [Op("read_file", {"path": path}, sha256=digest) for path, digest in digests]
        ops.append(_bash("cat data/*.txt | wc -c", t))
        return ops
    if kind == "background_jobs":
        return [
            _bash(
                "nohup sh -c 'while :; do date +%s%N >> bg.log; sleep 0.1; done' "
                ">/dev/null 2>&1 & sleep 1; test $(wc -l < bg.log) -ge 3 && echo LOGGING",
                t,
                expect="background",
                stdout_has="LOGGING",
            ),  # fmt: skip
            _bash(
                "setsid sh -c 'sleep 3600' >/dev/null 2>&1 < /dev/null & echo DETACHED",
                t,
                expect="background",
                stdout_has="DETACHED",
            ),  # fmt: skip
            _bash(
                "(sleep 0.3; echo late > late.txt) & wait; cat late.txt", t, stdout_has="late"
            ),  # fmt: skip
            _bash("ls", t, stdout_has="bg.log"),
        ]
    if kind == "fork_bomb":  # bounded (2**9 processes), so a sandbox without limits survives it
        bomb = (
            "b() { if [ $1 -gt 0 ]; then b $(($1-1)) & b $(($1-1)); wait; else sleep 30; fi; }; b 8"
        )
        return [_bash(bomb, ft * 2, expect="fault", check_leftovers=True), _alive(limits)]
    if kind == "memory_hog":
        size = 2 * limits.memory_mb
        hog = (f"python3 -c \"b = bytearray({size} * 1024 * 1024)\n"
               "for i in range(0, len(b), 4096): b[i] = 1\nprint('ALLOCATED')\"")  # fmt: skip
        return [_bash(hog, t, expect="fault", check_leftovers=True,
                      extra={"allocated_mb": size}), _alive(limits)]  # fmt: skip
    if kind == "runaway_loop":
        return [_bash("while :; do :; done", ft, expect="fault", check_leftovers=True),
                _alive(limits)]  # fmt: skip
    if kind == "output_flood":
        return [_bash("yes flood", t, expect="fault", check_leftovers=True), _alive(limits)]
    if kind == "ignore_sigterm":
        return [
            _bash(
                "(trap '' TERM; exec sleep 3601) >/dev/null 2>&1 & echo STARTED",
                t,
                expect="background",
                stdout_has="STARTED",
            ),  # fmt: skip
            _bash("trap '' TERM; sleep 600", ft, expect="fault", check_leftovers=True),
            _alive(limits),
        ]
    if kind == "network":
        return [_bash(f"python3 -c '{_NETWORK}'", t, expect="fault"), _alive(limits)]
    if kind == "killed_mid_command":
        return [
            _bash(
                f"sleep {KILL_MARKER}; echo SURVIVED",
                t,
                expect="fault",
                check_leftovers=True,
                kill_from_outside=True,
            ),  # fmt: skip
            _alive(limits),
        ]
    raise ValueError(f"agent_stress: unknown workload kind {kind!r}; known: {', '.join(KINDS)}")


PROMPT = """You are driving a sandbox stress test. Make exactly the tool calls below, in order, one \
per turn, with exactly these arguments, whatever their results; then reply DONE.

<calls>
{calls}
</calls>"""


def ops_from_metadata(metadata: dict[str, Any]) -> list[Op]:
    """The operations a sample carries in its metadata (`Sample.metadata["ops"]`)."""
    return [Op(**op) for op in metadata["ops"]]


def stress_dataset(
    samples: int, kinds: Sequence[str], limits: Limits, seed: int = 0
) -> list[Sample]:
    """`samples` samples cycling through `kinds` (each kind at least once when samples >= len)."""
    if samples <= 0:
        raise ValueError(f"agent_stress: samples must be positive, got {samples}")
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise ValueError(
            f"agent_stress: unknown workload kind(s) {unknown or '(none given)'}; "
            f"known: {', '.join(KINDS)}"
        )
    rng = random.Random(seed)
    dataset = []
    for i in range(samples):
        kind = kinds[i % len(kinds)]
        ops = workload(kind, limits, rng)
        calls = json.dumps([op.call() for op in ops], indent=1)
        dataset.append(
            Sample(
                id=f"{i:03d}-{kind}",
                input=PROMPT.format(calls=calls),
                metadata={
                    "kind": kind,
                    "fault": kind in FAULTS,
                    "n_ops": len(ops),
                    "ops": [asdict(op) for op in ops],
                },
            )
        )
    return dataset
