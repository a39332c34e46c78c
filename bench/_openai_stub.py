"""An instant OpenAI-compatible chat server: every request gets `MAX_TOKENS` tokens at once.

The bench runs its clients against it to measure what the client side costs (start-up and
per-request CPU) without a model server's time and noise: `python _openai_stub.py PORT MODEL`.
"""

from __future__ import annotations

import sys
import time

from _common import MAX_TOKENS
from aiohttp import web


def _app(model: str) -> web.Application:
    content = " ".join(["word"] * MAX_TOKENS)

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        usage = {"prompt_tokens": 16, "completion_tokens": MAX_TOKENS}
        usage["total_tokens"] = usage["prompt_tokens"] + MAX_TOKENS
        return web.json_response(
            {
                "id": "chatcmpl-stub",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", model),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "length",
                    }
                ],
                "usage": usage,
            }
        )

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": model, "object": "model"}]})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    return app


if __name__ == "__main__":
    web.run_app(_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), print=None)
