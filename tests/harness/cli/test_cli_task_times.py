"""`harness run-all` (make run) prints each task's wall time and each local model's dtype."""

from __future__ import annotations

from harness.cli import commands as cli


def test_task_times_and_serving_are_printed(capsys):
    serving = {
        "vllm/smollm2-135m-instruct": {
            "backend": "vllm",
            "startup_s": 41.2,
            "dtype": {"reason": "bfloat16: the CPU computes bf16 natively (avx512_bf16)"},
        }
    }
    times = {cli.SERVER_START_ROW: 41.2, "anchor": 11.4, "correct": 31.0}
    cli._print_task_times(times, serving)
    out = capsys.readouterr().out
    assert "time per task" in out
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in out.splitlines()
        if line.count("│") == 3
    }
    # the server's start has its own row: no task pays it
    assert rows == {cli.SERVER_START_ROW: "41", "anchor": "11", "correct": "31", "total": "84"}
    assert "server started in 41 s" in out and "avx512_bf16" in out
