"""Server process management that does not need vLLM itself."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from harness.models.vllm_server import (
    VLLMServer,
    VLLMServerError,
    _die_with_parent,
    _spawn,
    _wait_healthy,
)
from tests.conftest import REPO_ROOT

PARENT = """
import subprocess, sys, time
from harness.models.vllm_server import _die_with_parent
child = subprocess.Popen(["sleep", "300"], start_new_session=True, preexec_fn=_die_with_parent)
print(child.pid, flush=True)
time.sleep(300)
"""


def test_server_child_dies_when_harness_is_killed_hard():
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env
    )
    child_pid = int(parent.stdout.readline())
    os.kill(child_pid, 0)  # alive
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child_pid, 0)
        except ProcessLookupError:
            return
        # Reap if it became our zombie (it is reparented to init, so normally not).
        time.sleep(0.1)
    os.kill(child_pid, signal.SIGKILL)
    pytest.fail("the server's stand-in outlived the killed harness")


def test_server_started_from_a_worker_thread_outlives_the_thread():
    """The parent-death signal follows the forking thread: a thread that ends must not take the
    server with it (the spawner thread forks instead)."""

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            ["sleep", "60"], start_new_session=True, preexec_fn=_die_with_parent
        )

    started: list[subprocess.Popen[bytes]] = []
    worker = threading.Thread(target=lambda: started.append(_spawn(start)))
    worker.start()
    worker.join()
    [child] = started
    try:
        time.sleep(1.0)  # a parent-death SIGTERM would have arrived by now
        assert child.poll() is None, (
            f"the server died with its starting thread ({child.returncode})"
        )
    finally:
        child.kill()
        child.wait()

    # Without the spawner the same start from a thread that ends is killed: the test can fail.
    direct: list[subprocess.Popen[bytes]] = []
    worker = threading.Thread(target=lambda: direct.append(start()))
    worker.start()
    worker.join()
    assert direct[0].wait(timeout=10) == -signal.SIGTERM


def test_early_exit_reports_log_tail(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("line 1\nValueError: bad model\n")
    proc = subprocess.Popen(["true"])
    proc.wait()
    server = VLLMServer(proc, "http://127.0.0.1:9/v1", "m", "/x", log)
    with pytest.raises(
        VLLMServerError, match="(?s)exited with code 0 during start-up.*ValueError: bad model"
    ):
        _wait_healthy(server, timeout_s=5)


def test_wait_until_healthy_returns_on_200_and_names_death_or_timeout() -> None:
    import http.server
    import threading

    from harness.models.vllm_server import VLLMServerError, free_port, wait_until_healthy

    class _Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        wait_until_healthy(url, 5, exited=lambda: None, not_ready=lambda: "late")
        with pytest.raises(VLLMServerError, match="exited with code 3"):
            wait_until_healthy(url, 5, exited=lambda: "exited with code 3", not_ready=lambda: "")
    finally:
        server.shutdown()
    closed = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(VLLMServerError, match="not healthy within 1 s"):
        wait_until_healthy(
            closed, 1, exited=lambda: None, not_ready=lambda: "not healthy within 1 s"
        )
