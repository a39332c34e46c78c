"""Run tasks through inspect's eval-set (resumable) and summarise the result."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.cli.config import EvalConfig
from harness.cli.discovery import TaskEntry
from harness.models.aliases import ModelServers, ResolvedModel, resolve_model


@dataclass
class TaskSummary:
    task: str
    model: str
    status: str
    samples: str
    metrics: dict[str, float]
    log: str
    error: str | None = None
    # the same results keyed "<score name>/<metric>" whatever the number of scorers (the form
    # the task's leaderboard schema names them in; reports.headline_text reads it)
    scored: dict[str, float] = field(default_factory=dict)


@dataclass
class EvalOutcome:
    success: bool
    summaries: list[TaskSummary]
    log_dir: str


def run_eval(
    config: EvalConfig,
    tasks: dict[str, TaskEntry],
    task_args: dict[str, dict[str, Any]],
    servers: ModelServers | None = None,
) -> EvalOutcome:
    """Evaluate `config.task` on `config.model`; re-running the same call resumes.

    `servers` lets several runs share the model servers they need (one vLLM start for all).
    """
    from harness.cli.interrupt import raise_if_interrupted

    raise_if_interrupted()  # a command that runs several evals stops at the first Ctrl-C
    if servers is None:
        with ModelServers() as own:
            return run_eval(config, tasks, task_args, own)
    from inspect_ai import eval_set
    from inspect_ai.model import get_model

    # An fsspec URL (s3://..., file://...) as given; a local path made absolute.
    log_dir = config.log_dir if "://" in config.log_dir else str(Path(config.log_dir).resolve())
    resolved = resolve_model(config.model, config.backend)
    resolved.args.update(config.model_arg)
    from harness.cli.declared import (
        apply_generate_defaults,
        calls_model,
        draw_small_limit,
        unused_roles,
    )

    # A task that never calls the model under test (agent_stress's scripted agent) starts no
    # model server: inspect's "none" model stands in (each such task names its own model).
    calls = calls_model(config, tasks, task_args)
    model = _model(servers, resolved, get_model) if calls else get_model("none")
    unused = unused_roles(config, tasks, task_args)
    for role, declaring in unused.items():
        _warn(
            f"role.{role}= is not used: {', '.join(declaring)} calls no model with these "
            "arguments (no server started for it)"
        )
    roles = {
        role: _model(servers, resolve_model(spec, config.backend), get_model)
        for role, spec in config.role.items()
        if role not in unused
    }
    # Tasks read the option when they build requests (harness.constrained.AnswerFormat).
    from harness.constrained import CONSTRAINED_ENV, constrained_metadata

    os.environ[CONSTRAINED_ENV] = config.constrained
    built = [tasks[name].function(**task_args.get(name, {})) for name in config.task]
    for name, built_task in zip(config.task, built, strict=True):
        if name in config.preset_records:  # the preset, its overrides and deviations (issue 30)
            record = config.preset_records[name]
            built_task.metadata = {**(built_task.metadata or {}), "harness_preset": record}
    for name, built_task in zip(config.task, built, strict=True):  # tasks' declarations
        declared: dict[str, Any] = {
            "generate": apply_generate_defaults(config, tasks[name], built_task)
        }
        drawn = draw_small_limit(config, tasks[name], built_task, _warn)
        if drawn is not None:
            declared["limit"] = drawn
        declared["calls_model"] = calls
        built_task.metadata = {**(built_task.metadata or {}), "harness_declared": declared}
    if config.sandbox in ("docker", "k8s"):  # engine-API providers (sandboxes/README.md)
        from sandboxes import harness_sandbox

        for name, built_task in zip(config.task, built, strict=True):
            spec = harness_sandbox(config.sandbox, name)
            # a task that already chose this provider keeps its own config (its limits)
            own = built_task.sandbox
            if own is None or spec is None or own.type != spec.type:
                built_task.sandbox = spec
    generate: dict[str, Any] = {} if config.seed is None else {"seed": config.seed}
    if config.max_tokens is not None:
        generate["max_tokens"] = config.max_tokens
    if config.temperature is not None:
        generate["temperature"] = config.temperature
    success, logs = eval_set(
        built,
        log_dir=log_dir,
        model=model,
        model_roles=roles or None,
        limit=config.limit,
        epochs=config.epochs,
        retry_attempts=config.retry_attempts,
        retry_wait=1,
        max_connections=config.max_connections,
        max_samples=config.max_samples,
        fail_on_error=config.fail_on_error,
        display=config.display,
        log_dir_allow_dirty=True,
        metadata={
            **_run_metadata(config),
            "harness_serving": servers.serving_metadata(),
            "harness_constrained": constrained_metadata(),
        },
        # None leaves inspect's default (and its environment variables) in charge.
        ctl_server=None if config.ctl_server is None else config.ctl_server == "on",
        log_realtime=None if config.log_realtime is None else config.log_realtime == "on",
        **generate,
    )
    raise_if_interrupted()  # inspect ended the run itself (cancelled): the command stops here
    return EvalOutcome(
        success=bool(success), summaries=[summarise(log) for log in logs], log_dir=log_dir
    )


def _warn(text: str) -> None:
    sys.stderr.write(f"warning: {text}\n")
    sys.stderr.flush()


def _run_metadata(config: EvalConfig) -> dict[str, Any]:
    from harness.records import git_revision
    from harness.version import __version__

    return {
        "harness_model_spec": config.model,
        "harness_backend": config.backend
        if config.model in ("default", "embedded", "smollm2")
        else "as named",
        "harness_roles": dict(config.role),
        "harness_preset_name": config.preset,
        "harness_version": __version__,
        "harness_git": git_revision(),
    }


def _model(
    servers: ModelServers,
    resolved: ResolvedModel,
    get_model: Any,
) -> Any:
    prepared = servers.prepare(resolved)
    args = dict(prepared.args)
    base_url = args.pop("base_url", None)
    if base_url and prepared.name.startswith("vllm/"):
        # Through the environment, so the model's identity (and eval-set resume) does not
        # depend on the port the server happened to get.
        os.environ["VLLM_BASE_URL"] = base_url
        base_url = None
    return get_model(prepared.name, base_url=base_url, **args)


def summarise(log: Any) -> TaskSummary:
    metrics: dict[str, float] = {}
    scored: dict[str, float] = {}
    if log.results is not None:
        for score in log.results.scores:
            for name, metric in score.metrics.items():
                key = name if len(log.results.scores) == 1 else f"{score.name}/{name}"
                metrics[key] = metric.value
                scored[f"{score.name}/{name}"] = metric.value
    total = log.results.total_samples if log.results else 0
    done = log.results.completed_samples if log.results else 0
    error = None
    if log.error is not None:
        error = str(log.error.message).splitlines()[0][:200]
    return TaskSummary(
        task=log.eval.task,
        model=log.eval.model,
        status=log.status,
        samples=f"{done}/{total}",
        metrics=metrics,
        log=log.location,
        error=error,
        scored=scored,
    )
