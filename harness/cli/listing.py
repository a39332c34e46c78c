"""`harness list [<task>]`: a line per task, or one task's details, readable in 80 columns.

The compact list gives each task its name, model roles and description (cut to the line, with
`harness list <task>` for the rest), then the model specs and sandboxes one line each. A task's
details list its parameters (`name: type = default`), what it declares for the harness (roles,
generation defaults, whether it calls the model under test, how a small limit is drawn) and the
arguments `make run` gives it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from harness.cli.discovery import TaskEntry, TaskRegistry

SANDBOXES = {
    "bwrap": "bubblewrap: read-only root, private work dir, no network, own PID namespace "
    "(default where no Docker engine runs)",
    "docker": "a container per sample on the Docker engine API (no network, read-only root, "
    "limits); inspect's compose `docker` provider uses sandboxes/docker/compose.yaml",
    "k8s": "inspect_k8s_sandbox pods with sandboxes/k8s values (anchor, swe_abs)",
    "local": "inspect's local sandbox: NO isolation; for debugging only",
}


def _compact(title: str, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> Table:
    """A borderless table whose leading columns keep their full width; the last is cut."""
    table = Table(title=title, title_justify="left", box=None, pad_edge=False, show_edge=False)
    for i, name in enumerate(header):
        if i == len(header) - 1:
            table.add_column(name, no_wrap=True, overflow="ellipsis")
        else:
            width = max([len(name), *(len(row[i]) for row in rows)])
            table.add_column(name, no_wrap=True, min_width=width)
    for row in rows:
        table.add_row(*row)
    return table


def print_tasks(console: Console, registry: TaskRegistry) -> int:
    """One line per task, model spec and sandbox."""
    from harness.models.aliases import MODEL_ALIASES

    rows = [(e.name, ",".join(e.roles) or "—", e.description) for e in registry.tasks.values()]
    rows += [
        (name, "", f"[red]failed to load: {why}[/red]") for name, why in registry.errors.items()
    ]
    console.print(
        _compact("tasks (harness list <task>: parameters, defaults)", ("task", "roles", ""), rows)
    )
    models = [(spec, meaning) for spec, meaning in MODEL_ALIASES.items()]
    console.print(_compact("models (model=<spec>)", ("spec", ""), models))
    console.print(_compact("sandboxes (sandbox=<name>)", ("name", ""), list(SANDBOXES.items())))
    return 0


def print_task(console: Console, registry: TaskRegistry, name: str) -> int:
    """One task's parameters and declarations; 1 when it cannot be loaded."""
    loaded = TaskRegistry({name: registry.tasks[name]} if name in registry.tasks else {}, {})
    loaded = loaded.loaded()
    why = registry.errors.get(name) or loaded.errors.get(name)
    if why:
        console.print(f"[red]{name}: failed to load: {why}[/red]", soft_wrap=True)
        return 1
    entry = loaded.tasks[name]
    console.print(f"[bold]{name}[/bold] — {entry.description}")
    params = Table(box=None, pad_edge=False, show_edge=False, title_justify="left")
    params.add_column("parameter", no_wrap=True)
    params.add_column("type = default", overflow="fold")
    for p in entry.params.values():
        params.add_row(p.name, p.type_name + ("" if p.required else f" = {p.default!r}"))
    console.print(params)
    for label, value in declaration_lines(entry):
        console.print(f"{label + ':':<20} {value}", markup=False, highlight=False)
    return 0


def declaration_lines(entry: TaskEntry) -> list[tuple[str, str]]:
    """What the task declares for the harness, as (label, value) lines."""
    d = entry.declarations
    roles = ", ".join(f"role.{r}=" for r in d.roles) or "none (only model=)"
    generate = _settings(d.generate) or "the model provider's defaults"
    if isinstance(d.calls_model, bool):
        calls = "yes" if d.calls_model else "no (no model server is started for it)"
    else:
        calls = "only when " + " or ".join(
            f"{k}={'|'.join(map(str, v))}" for k, v in d.calls_model.items()
        )
    small = (
        f"drawn in turn over {d.stratify!r}"
        if d.stratify
        else (f"warned below {d.min_samples} samples" if d.min_samples else "the first N samples")
    )
    lines = [
        ("model roles", roles),
        ("generation", generate),
        ("calls the model", calls),
        ("limit=N", small),
    ]
    if entry.run_all_args:
        lines.append(("make run", _settings(entry.run_all_args)))
    return lines


def _settings(values: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())
