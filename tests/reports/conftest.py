"""Fixtures for the report tests: one log directory of real inspect logs, built once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from _toy_logs import build_correct_log_dir, build_log_dir  # noqa: E402

DET_SCHEMA = """
task: det_toy
title: "Toy detector"
method_args: [detector]
metrics:
  - id: auroc
    key: "suspicion/auroc"
    display: AUROC
    direction: higher
    headline: true
    format: percent
    interval: {kind: auroc, score: "score.suspicion.value", label: "score.suspicion.metadata.label"}
  - id: ghost
    key: "*/ghost_metric"
    display: "Ghost"
    direction: lower
plots:
  - {kind: bars, metric: auroc}
  - {kind: roc, metric: auroc}
  - {kind: score_drop, before: "score.suspicion.value", after: "score.suspicion.metadata.label", group: "metadata.kind"}
"""

DET_REFERENCE = """
paper: "Toy detection paper (ICML 2026)"
source: "Table 1"
rows:
  - {model: "Llama-3.1-8B", method: "nci", dataset: "toyset", metric: "auroc", value: 72.5}
  - {model: "Llama-3.1-8B", method: "fdbd", dataset: "toyset", metric: "auroc", value: 0.61, scale: 1}
  - {model: "Llama-3.1-8B", method: "nci", metric: "auroc"}
  - {model: "Qwen", method: "nci", metric: "f1", value: 0.5}
"""


@pytest.fixture(scope="session")
def toy_logs(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("report_logs") / "logs"
    return root, build_log_dir(root)


@pytest.fixture(scope="session")
def toy_schema_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("schemas")
    (d / "det_toy.yaml").write_text(DET_SCHEMA)
    return d


def _reference_dir(tmp_path_factory, task: str, text: str) -> Path:
    """A tasks/-like folder holding ``<task>/reference.yaml``."""
    d = tmp_path_factory.mktemp(f"{task}_tasks")
    (d / task).mkdir()
    (d / task / "reference.yaml").write_text(text)
    return d


@pytest.fixture(scope="session")
def toy_reference_dir(tmp_path_factory) -> Path:
    return _reference_dir(tmp_path_factory, "det_toy", DET_REFERENCE)


@pytest.fixture(scope="session")
def toy_report(toy_logs, toy_schema_dir, toy_reference_dir, tmp_path_factory):
    from reports import build_report

    root, _ = toy_logs
    out = tmp_path_factory.mktemp("report_out")
    return build_report(
        root,
        out,
        baseline="scripted/weak",
        n_boot=500,
        schema_dir=toy_schema_dir,
        reference_dirs=[toy_reference_dir],
    )


# Paper numbers for the correct-like runs: per subset, plus one without a dataset.
CORRECT_REFERENCE = """
paper: "Toy CORRECT paper"
source: "Table 1"
rows:
  - {model: "GPT-4o", method: "all_at_once", dataset: "algorithm_generated", metric: "step_accuracy", value: 0.125}
  - {model: "GPT-4o", method: "all_at_once", dataset: "hand_crafted", metric: "step_accuracy", value: 0.0526}
  - {model: "GPT-4o", method: "binary_search", dataset: "hand_crafted", metric: "step_accuracy", value: 0.069}
  - {model: "GPT-4o", method: "binary_search", dataset: "algorithm_generated", metric: "step_accuracy", value: 0.2398}
  - {model: "GPT-4o", method: "all_at_once", metric: "agent_accuracy", value: 0.55}
"""


@pytest.fixture(scope="session")
def correct_logs(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    root = tmp_path_factory.mktemp("correct_logs") / "logs"
    return root, build_correct_log_dir(root)


@pytest.fixture(scope="session")
def correct_reference_dir(tmp_path_factory) -> Path:
    return _reference_dir(tmp_path_factory, "correct", CORRECT_REFERENCE)


@pytest.fixture(scope="session")
def correct_report(correct_logs, correct_reference_dir, tmp_path_factory):
    """The packaged correct schema (split_rows_by: metadata.subset) on the correct-like runs."""
    from reports import build_report

    root, _ = correct_logs
    out = tmp_path_factory.mktemp("correct_out")
    return build_report(root, out, n_boot=500, reference_dirs=[correct_reference_dir])


# ------------------------------------------------- issue 31: folders shaped like a first hour


@pytest.fixture(scope="session")
def run_all_logs(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    from _toy_folders import build_run_all_dir

    root = tmp_path_factory.mktemp("run_all_logs") / "logs"
    return root, build_run_all_dir(root)


@pytest.fixture(scope="session")
def fourteen_logs(tmp_path_factory) -> tuple[Path, dict[str, Path]]:
    from _toy_folders import build_fourteen_run_dir

    root = tmp_path_factory.mktemp("fourteen_logs") / "logs"
    return root, build_fourteen_run_dir(root)


@pytest.fixture(scope="session")
def run_all_report(run_all_logs, tmp_path_factory):
    """The packaged schemas and paper numbers on a `make run`-like folder."""
    from reports import build_report

    root, _ = run_all_logs
    return build_report(root, tmp_path_factory.mktemp("run_all_out"), n_boot=200)


@pytest.fixture(scope="session")
def fourteen_report(fourteen_logs, tmp_path_factory):
    from reports import build_report

    root, _ = fourteen_logs
    return build_report(root, tmp_path_factory.mktemp("fourteen_out"), n_boot=200)
