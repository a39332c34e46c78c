"""AnoLLM and DiSPaT on the real embedded SmolLM2, 4 test rows, minimal budgets."""

import math

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import get_model

from tasks.dispat.task import dispat


@pytest.mark.embedded
@pytest.mark.slow
def test_llm_methods_on_the_embedded_model():
    import torch

    torch.set_num_threads(1)
    task = dispat(
        method="AnoLLM,DiSPaT,KNN",
        dataset="wbc",
        seeds=[0],
        max_test_rows=4,
        column_names="letters",
        train_steps=1,
        batch_size=1,
        n_permutations=1,
        dispat_iterations=1,
        dispat_samples=2,
        dispat_steps=1,
        max_new_tokens=24,
    )
    log = inspect_eval(
        task, model=get_model("scripted/unused", reply="unused"), display="none", log_dir=None
    )[0]
    assert log.status == "success", log.error
    assert len(log.samples) == 4
    for s in log.samples:
        sc = s.scores["anomaly_scores"]
        assert sc.metadata["errors"] == {}, sc.metadata["errors"]
        assert set(sc.value) == {"AnoLLM", "DiSPaT", "KNN"}
        assert all(math.isfinite(v) and v > 0 for m, v in sc.value.items() if m != "KNN")  # NLL > 0
    metrics = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    for m in ("AnoLLM", "DiSPaT"):
        assert 0.0 <= metrics[f"wbc/{m}/auroc"] <= 1.0
        assert metrics[f"wbc/{m}/fit_s"] > 0
