"""Every task's presets.yaml against the task itself: the paper preset read against the task
README's Protocol table, the smoke preset equal to `RUN_ALL_ARGS`, every setting a parameter of
the task or a harness option with a value it accepts, and `min_samples` equal to the report's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.cli.config import CONFIG_FIELDS, build_eval_config
from harness.cli.discovery import discover_tasks
from harness.presets import as_argument, load_presets

TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
TASKS = sorted(p.parent.name for p in TASKS_DIR.glob("*/task.py"))


def _protocol_rows(readme: Path) -> dict[str, list[str]]:
    """The README's `## Protocol` table: setting name -> its cells (value, source, deviation)."""
    text = readme.read_text(encoding="utf-8")
    match = re.search(r"^## Protocol[^\n]*\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"{readme} has no '## Protocol' section"
    rows: dict[str, list[str]] = {}
    for line in match.group(1).splitlines():
        if not line.startswith("|") or line.startswith("|---") or "| setting |" in line:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        assert len(cells) == 4, f"{readme}: a Protocol row needs 4 cells: {line}"
        rows[cells[0].strip("`*")] = cells[1:]
    return rows


def test_every_task_has_presets():
    assert TASKS and all((TASKS_DIR / t / "presets.yaml").is_file() for t in TASKS)


@pytest.mark.parametrize("task", TASKS)
def test_paper_preset_matches_the_readme_protocol_table(task):
    paper = load_presets(TASKS_DIR / task).get("paper")  # load checks every row is traced
    rows = _protocol_rows(TASKS_DIR / task / "README.md")
    settings = {s.key: s for s in (*paper.settings, *paper.protocol)}
    assert set(rows) == set(settings), f"{task}: README Protocol rows differ from presets.yaml"
    for key, setting in settings.items():
        value, source, deviation = rows[key]
        shown = as_argument(setting.value)
        assert (f"`{shown}`" if key in paper.values() else shown) in value, (task, key, value)
        assert (source != "—") == bool(setting.source), f"{task}.{key}: source differs"
        assert (deviation != "—") == bool(setting.deviation), f"{task}.{key}: deviation differs"
        assert source != "—" or deviation != "—", f"{task}.{key}: neither traced nor a deviation"


@pytest.mark.parametrize("task", TASKS)
def test_smoke_preset_is_run_all_args(task):
    """`make run` keeps using RUN_ALL_ARGS: the smoke preset must say the same."""
    entry = discover_tasks().tasks[task]
    assert load_presets(TASKS_DIR / task).get("smoke").values() == entry.run_all_args


@pytest.mark.parametrize("task", TASKS)
def test_min_samples_is_the_reports(task):
    reference = TASKS_DIR / task / "reference.yaml"
    presets = load_presets(TASKS_DIR / task)
    if not reference.is_file():  # agent_stress: no paper numbers to compare with
        return
    report = yaml.safe_load(reference.read_text(encoding="utf-8")).get("report") or {}
    assert presets.min_samples == report.get("min_samples"), f"{task}: min_samples differ"


@pytest.mark.parametrize("preset", ["smoke", "paper"])
@pytest.mark.parametrize("task", TASKS)
def test_every_setting_is_accepted_by_the_task(task, preset):
    """The preset expands through the real command-line path: each setting is a parameter of
    the task (converted to its annotated type) or a harness option within its bounds."""
    registry = discover_tasks()
    config, task_args, _ = build_eval_config(
        [f"task={task}", f"preset={preset}"], registry.tasks, all_tasks=sorted(registry.tasks)
    )
    values = load_presets(TASKS_DIR / task).get(preset).values()
    params = registry.tasks[task].params
    for key, value in values.items():
        if key in params:
            assert as_argument(task_args[task][key]) == as_argument(value), (task, key)
        else:
            assert key in CONFIG_FIELDS, f"{task}: {key} is neither parameter nor option"
            assert as_argument(getattr(config, key)) == as_argument(value), (task, key)
    record = config.preset_records[task]
    assert record["name"] == preset and record["overrides"] == {}
    assert record["protocol_met"] is (preset == "paper")
