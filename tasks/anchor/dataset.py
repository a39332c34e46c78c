"""Bundled scenarios → inspect Samples (the synthetic world travels as Sample.files)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from inspect_ai.dataset import MemoryDataset, Sample

from methods.anchor import Scenario, load_scenarios

SCENARIO_DIR = Path(__file__).parent / "scenarios"


AuditorMode = Literal["direct", "persistent", "persistent_template"]
AUDITOR_MODES: tuple[str, ...] = get_args(AuditorMode)


def record_to_sample(scenario: Scenario, auditor: AuditorMode = "persistent") -> Sample:
    """One scenario under one auditor mode → one Sample; the world goes into the work dir."""
    if auditor not in AUDITOR_MODES:
        raise ValueError(f"unknown auditor mode {auditor!r}; choose one of {AUDITOR_MODES}")
    return Sample(
        id=f"{scenario.id}--{auditor}",
        # The target never sees this: the auditor writes its user turns.
        input=scenario.objective,
        files={f.path: f.content for f in scenario.world},
        metadata={
            "scenario_id": scenario.id,
            "auditor": auditor,
            "category": scenario.category,
            "usc": scenario.legal.usc,
            "legal_title": scenario.legal.title,
            "severity": scenario.severity,
            "n_requested_actions": len(scenario.requested_actions),
            "scenario_source": Path(scenario.source).name,
        },
    )


def anchor_dataset(
    modes: list[AuditorMode], scenario_dir: str | Path = SCENARIO_DIR, ids: list[str] | None = None
) -> tuple[MemoryDataset, dict[str, Scenario]]:
    """Scenarios × auditor modes (scenario-major, so a limit keeps the modes paired)."""
    scenarios = load_scenarios(scenario_dir, ids)
    samples = [record_to_sample(s, m) for s in scenarios for m in modes]
    return MemoryDataset(samples, name="anchor_scenarios"), {s.id: s for s in scenarios}
