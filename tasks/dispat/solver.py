"""The solver: look up (fitting on first use) every method's score for this sample's test row."""

from __future__ import annotations

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from tasks.dispat.runner import DetectorRunner
from tasks.dispat.scorer import STATE_KEY


@solver
def detector_scores(runner: DetectorRunner, methods: list[str]) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:  # noqa: ARG001
        md = state.metadata
        scores: dict[str, float] = {}
        errors: dict[str, str] = {}
        timing: dict[str, dict[str, float]] = {}
        diagnostics: dict[str, dict] = {}
        for method in methods:
            res = await runner.result(md["dataset"], md["seed"], method)
            n_test = len(runner.splits[(md["dataset"], md["seed"])].y_test)
            timing[method] = {
                "fit_s": res.fit_seconds,
                "score_s": res.score_seconds,
                "rows_per_s": n_test / res.score_seconds if res.score_seconds > 0 else float("nan"),
            }
            if res.diagnostics and md["test_index"] == 0:  # once per split, not per row
                diagnostics[method] = res.diagnostics
            if res.error is not None or res.scores is None:
                errors[method] = res.error or "no scores"
            else:
                scores[method] = float(res.scores[md["test_index"]])
                if res.n_nonfinite_replaced:
                    timing[method]["n_nonfinite_replaced"] = float(res.n_nonfinite_replaced)
        state.metadata[STATE_KEY] = {
            "scores": scores,
            "errors": errors,
            "timing": timing,
            "diagnostics": diagnostics,
        }
        return state

    return solve


def current_model_name() -> str:
    return str(get_model())
