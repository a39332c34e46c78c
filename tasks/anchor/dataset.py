"""Bundled scenarios → inspect Samples (the synthetic world travels as Sample.files)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from inspect_ai.dataset import MemoryDataset, Sample

from harness.splits import SourceSplit, load_source_split
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


def load_split() -> SourceSplit:
    """anchor's frozen split by scenario category (tasks/anchor/splits.yaml)."""
    return load_source_split("anchor")


def split_scenarios(
    scenarios: list[Scenario], split: str, source_split: SourceSplit, named: bool
) -> list[Scenario]:
    """The scenarios whose category is on `split` (all of them for ``all``). A scenario named
    explicitly (`named`) that is on the other side is an error naming it and its side, and so is
    a split that keeps nothing."""
    kept = source_split.select(scenarios, lambda s: s.category, split)
    if named and len(kept) < len(scenarios):
        kept_ids = {s.id for s in kept}
        off = [
            f"{s.id} ({s.category}: {source_split.side(s.category)})"
            for s in scenarios
            if s.id not in kept_ids
        ]
        raise ValueError(
            f"anchor: scenarios named off split={split}: {', '.join(off)} "
            "(tasks/anchor/splits.yaml); name scenarios of that split or use split=all"
        )
    if not kept:
        raise ValueError(f"anchor: no scenario has its category on split={split}")
    return kept


def anchor_dataset(
    modes: list[AuditorMode],
    scenario_dir: str | Path = SCENARIO_DIR,
    ids: list[str] | None = None,
    split: str = "all",
) -> tuple[MemoryDataset, dict[str, Scenario]]:
    """Scenarios of `split` (by category) × auditor modes (scenario-major, so a limit keeps the
    modes paired)."""
    scenarios = split_scenarios(
        load_scenarios(scenario_dir, ids), split, load_split(), named=ids is not None
    )
    samples = [record_to_sample(s, m) for s in scenarios for m in modes]
    return MemoryDataset(samples, name="anchor_scenarios"), {s.id: s for s in scenarios}
