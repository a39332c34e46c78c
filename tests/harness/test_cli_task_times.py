"""`harness run-all` (make run) prints each task's wall time and each local model's dtype."""

from __future__ import annotations

from harness import cli


def test_task_times_and_serving_are_printed(capsys):
    serving = {
        "vllm/smollm2-135m-instruct": {
            "backend": "vllm",
            "startup_s": 41.2,
            "dtype": {"reason": "bfloat16: the CPU computes bf16 natively (avx512_bf16)"},
        }
    }
    cli._print_task_times({"anchor": 52.4, "correct": 31.0}, serving)
    out = capsys.readouterr().out
    assert "time per task" in out
    rows = {
        line.split("│")[1].strip(): line.split("│")[2].strip()
        for line in out.splitlines()
        if line.count("│") == 3
    }
    assert rows == {"anchor": "52", "correct": "31", "total": "83"}
    assert "server started in 41 s" in out and "avx512_bf16" in out
