"""A model served again on a new server in the same process is reached on the new one.

inspect's vllm provider keeps one connection per served model name for the whole process (and
`get_model` memoizes the model): once a first server for a name has been used and stopped, a
second `ModelServers` serving the same name on another port was never reached — every request
went to the dead port ("Connection error."), as when two vLLM tests of one model ran in one
pytest process. Two small OpenAI-compatible HTTP servers stand in for vLLM here.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from inspect_ai.model import get_model

from harness.models import aliases, vllm_server
from harness.models.aliases import ModelServers, ResolvedModel

SERVED = "restart-probe-model"


class _FakeOpenAI(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(
            {"object": "list", "data": [{"id": SERVED, "object": "model", "max_model_len": 512}]}
        )

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        name = self.server.name  # type: ignore[attr-defined]
        self._send(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": SERVED,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": f"from {name}"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


@contextmanager
def _fake_server(name: str) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _FakeOpenAI)
    httpd.name = name  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Started:
    """What start_vllm_server returns, pointing at a fake server."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.startup_s = 0.0
        self.settings: dict[str, Any] = {}

    def stop(self) -> None:
        pass


async def _ask(name: str) -> str:
    output = await get_model(name).generate("hi")
    return output.completion


def test_a_model_served_again_is_reached_on_its_new_server(monkeypatch):
    monkeypatch.setattr(aliases, "_local_path", lambda key: key)
    monkeypatch.delenv("VLLM_BASE_URL", raising=False)
    resolved = ResolvedModel(f"vllm/{SERVED}", needs_vllm=True, vllm_path="probe")
    for name in ("first", "second"):
        with _fake_server(name) as url:
            monkeypatch.setattr(
                vllm_server, "start_vllm_server", lambda *a, _url=url, **k: _Started(_url)
            )
            with ModelServers() as servers:
                prepared = servers.prepare(resolved)
                assert prepared.args["base_url"] == url
                monkeypatch.setenv("VLLM_BASE_URL", url)  # as harness eval and the tests do
                # One event loop per eval, as two inspect eval() calls in one process.
                assert asyncio.run(_ask(prepared.name)) == f"from {name}"
