"""ANLS throughput: scorers.anls vs the `anls` PyPI package on the same 10k (prediction,
references) pairs, interleaved in one process so machine load hits both alike.

Goal (issue 14): at least as fast as the `anls` package (ratio ≥ 1.0). Also checks that both
give the same corpus score.

    make bench   (or: python bench/bench_anls.py)
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scorers.anls import anls_score  # noqa: E402

N_PAIRS = 10_000
ROUNDS = 5


def _pairs(seed: int = 0) -> list[tuple[str, list[str]]]:
    """Answer-like strings (amounts, dates, names) with 1–3 references and edited predictions."""
    rng = random.Random(seed)
    words = ["total", "invoice", "john smith", "acme corp", "main street", "due", "tax", "rm"]
    out = []
    for _ in range(N_PAIRS):
        kind = rng.random()
        if kind < 0.3:
            ref = f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}"
        elif kind < 0.5:
            ref = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/20{rng.randint(10, 25)}"
        else:
            ref = " ".join(rng.choice(words) for _ in range(rng.randint(1, 6)))
        chars = list(ref)
        for _ in range(rng.randint(0, 4)):
            if chars:
                chars[rng.randrange(len(chars))] = rng.choice("abcxyz019 ")
        refs = [ref] + [ref.upper()] * rng.randint(0, 2)
        out.append(("".join(chars), refs))
    return out


def main() -> None:
    import anls as anls_pkg

    pairs = _pairs()
    ours_t, ref_t = [], []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        ours = sum(anls_score(p, r) for p, r in pairs)
        ours_t.append(time.perf_counter() - start)
        start = time.perf_counter()
        ref = sum(anls_pkg.anls_score(p, r) for p, r in pairs)
        ref_t.append(time.perf_counter() - start)
    if abs(ours - ref) > 1e-6:
        raise SystemExit(f"scores differ: ours {ours / N_PAIRS:.6f} vs anls {ref / N_PAIRS:.6f}")
    o, r = statistics.median(ours_t), statistics.median(ref_t)
    print(
        f"ANLS on {N_PAIRS} pairs (median of {ROUNDS}): scorers.anls {o * 1e3:.1f} ms, "
        f"anls package {r * 1e3:.1f} ms; speed ratio (anls / ours) = {r / o:.1f}x "
        f"(goal >= 1.0); mean ANLS {ours / N_PAIRS:.4f} (same in both)"
    )


if __name__ == "__main__":
    main()
