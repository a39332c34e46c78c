"""`harness eval | list | report | serve | run-all` — key=value arguments throughout."""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NoReturn

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.cli.config import ConfigError, build_eval_config, clip, convert_value, parse_overrides

console = Console(stderr=False)
err = Console(stderr=True, soft_wrap=True)  # one-line errors stay one line

HELP = {
    "eval": """harness eval task=<name>[,<name>...|all] [model=<spec>] [backend=vllm|transformers]
             [role.<role>=<spec>] [model_arg.<key>=<value>] [limit=N] [epochs=K] [seed=S]
             [log_dir=DIR] [sandbox=bwrap|docker|k8s|local] [max_connections=N] [max_samples=N]
             [max_tokens=N] [temperature=T] [retry_attempts=N] [fail_on_error=X]
             [display=rich|plain|log|none] [ctl_server=on|off] [log_realtime=on|off]
             [constrained=on|off] [preset=smoke|paper] [dry_run=on] [<task_param>=<value> ...]
             [model=m1,m2] [grid.<key>=v1,v2 ...] [executor=local|ray] [ray_address=ADDR] [--wide]
  Evaluate tasks (resumable: re-running the same command in the same log_dir reuses finished
  samples). `harness list` shows each task's parameters and the model roles it uses.
  A grid (task x model x grid.<key> values) runs one eval-set per cell into log_dir, in turn
  (executor=local) or as Ray tasks (executor=ray; docs/SCALING.md). The run ends with one line
  per task (headline metric, samples, status, log id); --wide shows every metric.""",
    "list": """harness list [<task>]
  One line per task (its model roles and what it is), the model specs and the sandboxes; with a
  task: its parameters (type = default), roles, generation defaults and make-run arguments.""",
    "report": """harness report [log_dir] [out=DIR] [baseline=<model>]
  Leaderboards (HTML, Markdown, CSV) from the logs in log_dir (default: logs).""",
    "serve": """harness serve [model=<hf path|default|default-vlm>] [port=N] [host=127.0.0.1] [max_model_len=N]
              [dtype=auto|bf16|fp32] [served_name=NAME] [enforce_eager=true|false]
              [backend=local|docker] [gpus=all|N|<ids>] [tp=N] [dp=N] [role=<r>] [image=IMG]
  An OpenAI-compatible vLLM server on a model (default: the embedded model); backend=docker runs
  it in a container (docs/SCALING.md).""",
    "run-all": """harness run-all [log_dir=DIR] [out=DIR] [backend=vllm|transformers] [tasks=a,b]
              [constrained=on|off] [--wide]
  The `make run` job: every task with its RUN_ALL_ARGS on the embedded model, then the report.""",
    "plan": """harness plan task=<name>[,<name>...|all] preset=smoke|paper [model=<spec>]
             [backend=vllm|transformers] [log_dir=DIR] [probe=on] [tokens_per_s=N]
             [prefill_per_s=N] [<key>=<value> ...]
  What a run would do, without starting a model: samples, model calls per role, prompt and
  output tokens, sandboxes, and the wall time from a stated throughput, a short probe of the
  back-end (probe=on starts it) or the latest log of the model in log_dir. Same as
  `harness eval ... dry_run=on`.""",
    "data": """harness data list [task ...] | harness data pull <task>
  Each task's data: where it is found (with its content hash) or the command that fetches it;
  pull downloads a task's pinned Hugging Face datasets into $HARNESS_DATA_DIR/hub/.""",
}
HELP_FLAGS = ("-h", "--help")
HELP_WIDTH = 80  # help is wrapped to this (or a narrower terminal), between words


def help_text(command: str, width: int = HELP_WIDTH, indent: str = "") -> str:
    """`HELP[command]` re-flowed to `width`: the synopsis with its options aligned under the
    first one, the description indented by two; no option or word is broken."""
    import textwrap

    lines = HELP[command].splitlines()
    synopsis = [lines[0]] + [
        line.strip() for line in lines[1:] if line.strip().startswith(("[", "|"))
    ]
    described = [line.strip() for line in lines[len(synopsis) :]]
    words = " ".join(synopsis).split(" ")
    head = f"harness {command} "
    hanging = indent + " " * len(head)
    wrapped = textwrap.wrap(
        " ".join(words[2:]),
        width=width,
        initial_indent=indent + head,
        subsequent_indent=hanging,
        break_long_words=False,
        break_on_hyphens=False,
    )
    body = textwrap.wrap(
        " ".join(described),
        width=width,
        initial_indent=indent + "  ",
        subsequent_indent=indent + "  ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(wrapped + body)


def usage(width: int = HELP_WIDTH) -> str:
    return "usage:\n" + "\n".join(help_text(c, width, indent="  ") for c in HELP)


USAGE = usage()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] != ["data", "pull"]:  # pull is the one command that goes to the hub
        _quiet_environment()
    if not argv or argv[0] in (*HELP_FLAGS, "help"):
        console.print(usage(_help_width()), markup=False, highlight=False, soft_wrap=True)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    handlers = {
        "eval": cmd_eval,
        "list": cmd_list,
        "report": cmd_report,
        "serve": cmd_serve,
        "run-all": cmd_run_all,
        "data": cmd_data,
        "plan": cmd_plan,
    }
    if command not in handlers:
        err.print(f"[red]unknown command '{clip(command)}'[/red]")
        err.print(usage(_help_width()), markup=False, highlight=False)
        return 2
    if any(arg in HELP_FLAGS for arg in rest):
        text = help_text(command, _help_width() - len("usage: "))
        console.print("usage: " + text.replace("\n", "\n       "), markup=False, highlight=False)
        return 0
    try:
        return handlers[command](rest)
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return 2
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow] — re-run the same command to resume")
        return 130
    except Exception as exc:  # noqa: BLE001 - a clear one-line error; HARNESS_DEBUG=1 for the trace
        if os.environ.get("HARNESS_DEBUG"):
            raise
        err.print(
            f"[red]error:[/red] {type(exc).__name__}: {escape(clip(str(exc), 2000))}\n"
            "(set HARNESS_DEBUG=1 for the traceback)"
        )
        return 1


def _help_width() -> int:
    return max(40, min(HELP_WIDTH, console.width))


def _quiet_environment() -> None:
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def cmd_data(args: list[str]) -> int:
    from harness.cli.data_command import run_data_command
    from harness.cli.discovery import discover_tasks

    try:
        return run_data_command(args, sorted(discover_tasks().tasks), console)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


# ------------------------------------------------------------------------------------- eval
def cmd_eval(args: list[str]) -> int:
    from harness.cli.discovery import discover_tasks
    from harness.cli.eval import run_eval
    from harness.cli.executors import grid_plan, is_grid_request, run_plan
    from harness.cli.undefined import collect_undefined

    args, wide = _take_flag(args, "--wide")
    if any(a.replace(" ", "") in ("dry_run=on", "dry_run=true") for a in args):
        return cmd_plan([a for a in args if not a.startswith("dry_run=")])
    if _preset_over_tasks(args) and not is_grid_request(args):
        return _eval_each_task(args, wide)  # each task with its own preset's settings
    if is_grid_request(args):  # model=m1,m2, grid.<key>=..., executor=local|ray
        plan = grid_plan(args)
        started = time.monotonic()
        with _interruptible(plan.log_dir) as interrupt, collect_undefined() as undefined:
            outcome = run_plan(plan, console)
        if interrupt.stopped:
            return 130
        _print_summary(outcome, time.monotonic() - started, wide)
        _print_undefined(undefined, outcome.summaries)
        return 0 if outcome.success and all(s.status == "success" for s in outcome.summaries) else 1
    # Only the chosen tasks are imported (when build_eval_config reads their parameters).
    registry = discover_tasks()
    config, task_args, selected = build_eval_config(
        args, registry.tasks, all_tasks=sorted(registry.tasks)
    )
    _warn_task_errors({n: why for n, why in registry.errors.items() if n in config.task})
    started = time.monotonic()
    with _interruptible(config.log_dir) as interrupt, collect_undefined() as undefined:
        outcome = run_eval(config, selected, task_args)
    if interrupt.stopped:
        return 130
    _print_summary(outcome, time.monotonic() - started, wide)
    _print_undefined(undefined, outcome.summaries)
    return 0 if outcome.success and all(s.status == "success" for s in outcome.summaries) else 1


def _print_undefined(messages: list[str], summaries: list[Any]) -> None:
    """The run's undefined (NaN) metrics and why (harness.cli.undefined), in one line, if any."""
    from harness.cli.undefined import nan_metrics, undefined_line

    if line := undefined_line(messages, nan_metrics(summaries)):
        err.print(f"[yellow]{escape(line)}[/yellow]", soft_wrap=True)


class _Stopped:
    stopped = False


@contextlib.contextmanager
def _interruptible(log_dir: str) -> Iterator[_Stopped]:
    """Ctrl-C during a run (harness.cli.interrupt): one line with what is saved, then 130."""
    from harness.cli.interrupt import Interrupt, interrupted_message

    state = _Stopped()
    try:
        with Interrupt(log_dir, lambda text: err.print(text, markup=False, highlight=False)) as i:
            yield state
    except KeyboardInterrupt:
        state.stopped = True
    else:
        state.stopped = i.count > 0  # inspect ended the run itself after the interrupt
    if state.stopped:
        i.reported = True
        err.print(interrupted_message(log_dir), markup=False, highlight=False)


def cmd_plan(args: list[str]) -> int:
    from harness.cli.plan import cmd_plan as plan

    return plan(args, console)


def _preset_over_tasks(args: list[str]) -> bool:
    """`preset=` with several tasks (their presets may set harness options differently)."""
    options = dict(a.split("=", 1) for a in args if "=" in a)
    task = options.get("task", "")
    return "preset" in options and ("," in task or task.strip() == "all")


def _eval_each_task(args: list[str], wide: bool) -> int:
    """`task=a,b preset=p`: one eval per task into the same log_dir, one model server."""
    from harness.cli.discovery import discover_tasks
    from harness.cli.eval import EvalOutcome, run_eval
    from harness.models.aliases import ModelServers

    registry = discover_tasks()
    config, _, _ = build_eval_config(  # checks everything the runs share, once
        [a for a in args if not a.startswith("preset=")],
        registry.tasks,
        all_tasks=sorted(registry.tasks),
    )
    runs = [
        build_eval_config(
            [a for a in args if not a.startswith("task=")] + [f"task={name}"],
            registry.tasks,
            all_tasks=sorted(registry.tasks),
        )
        for name in config.task
    ]
    started, outcomes = time.monotonic(), []
    from harness.cli.undefined import collect_undefined

    with (
        _interruptible(config.log_dir) as interrupt,
        collect_undefined() as undefined,
        ModelServers() as servers,
    ):
        for run_config, task_args, selected in runs:
            outcomes.append(run_eval(run_config, selected, task_args, servers))
    if interrupt.stopped:
        return 130
    summaries = [s for o in outcomes for s in o.summaries]
    outcome = EvalOutcome(all(o.success for o in outcomes), summaries, outcomes[0].log_dir)
    _print_summary(outcome, time.monotonic() - started, wide)
    _print_undefined(undefined, summaries)
    return 0 if outcome.success and all(s.status == "success" for s in summaries) else 1


def _print_summary(outcome: Any, elapsed: float, wide: bool = False) -> None:
    """One line per task in 80 columns (harness.cli.summary); `--wide`: every metric."""
    from harness.cli.summary import print_summary

    print_summary(console, outcome, elapsed, wide=wide)


def _take_flag(args: list[str], flag: str) -> tuple[list[str], bool]:
    """`args` without `flag`, and whether it was there."""
    return [a for a in args if a != flag], flag in args


def _warn_task_errors(errors: dict[str, str]) -> None:
    for name, why in errors.items():
        err.print(f"[yellow]warning:[/yellow] task '{name}' could not be loaded: {why}")


# ------------------------------------------------------------------------------------- list
def cmd_list(args: list[str]) -> int:
    from harness.cli.discovery import discover_tasks
    from harness.cli.listing import print_task, print_tasks

    found = discover_tasks()
    if len(args) > 1 or any("=" in a for a in args):
        raise ConfigError(f"harness list takes at most one task name (got {clip(' '.join(args))})")
    if args:
        name = args[0]
        if name not in found.tasks and name not in found.errors:
            from harness.cli.config import suggest

            raise ConfigError(
                f"harness list: unknown task '{clip(name)}'{suggest(name, list(found.tasks))}; "
                f"known: {', '.join(found.tasks)}"
            )
        return print_task(console, found, name)
    return print_tasks(console, found.loaded())


# ------------------------------------------------------------------------------------- report
def cmd_report(args: list[str]) -> int:
    positional = [a for a in args if "=" not in a]
    options = dict(parse_overrides([a for a in args if "=" in a]))
    unknown = set(options) - {"out", "baseline", "log_dir"}
    if unknown:
        raise ConfigError(
            f"harness report: unknown option(s) {clip(', '.join(sorted(unknown)))}; "
            "expected out=, baseline=, log_dir="
        )
    if len(positional) > 1:
        raise ConfigError("harness report takes at most one log directory")
    if positional and "log_dir" in options:
        raise ConfigError("harness report: give the log directory once (positional or log_dir=)")
    log_dir = Path(positional[0] if positional else options.get("log_dir", "logs"))
    out_dir = Path(options.get("out", "reports-out"))
    try:
        exists = log_dir.is_dir()
    except OSError:  # e.g. a name too long for the file system
        exists = False
    if not exists:
        raise ConfigError(f"log directory {clip(str(log_dir))} does not exist")
    from reports import build_report

    result = build_report(log_dir, out_dir, baseline=options.get("baseline"))
    _print_report_result(result)
    return 0


def _print_report_result(result: Any) -> None:
    console.print(f"report: {len(result.runs)} runs, tasks: {', '.join(result.tasks) or '(none)'}")
    for label, path in (("html", result.html), ("markdown", result.markdown), ("csv", result.csv)):
        console.print(f"{label:>9}: {path}")
    for item in result.skipped:
        console.print(
            f"[yellow]  skipped:[/yellow] {Path(item.path).name} ({item.task or '?'}, {item.model or '?'}): {item.reason}"
        )


# ------------------------------------------------------------------------------------- serve
def cmd_serve(args: list[str]) -> int:
    from harness.models.embedded import EMBEDDED_NAME, embedded_model_dir
    from harness.models.vllm_server import start_vllm_server

    backends = [a.split("=", 1)[1] for a in args if a.startswith("backend=")]
    args = [a for a in args if not a.startswith("backend=")]
    if backends and backends[-1] == "docker":  # vLLM in a container (harness.models.docker_server)
        from harness.models.docker_server import serve_in_docker

        return serve_in_docker(args, console, err)
    if backends and backends[-1] != "local":
        raise ConfigError(f"harness serve: backend={clip(backends[-1])}; expected local or docker")
    options = dict(parse_overrides(args))
    known = {
        "model": str,
        "port": int,
        "host": str,
        "max_model_len": int,
        "dtype": str,
        "served_name": str,
        "enforce_eager": bool,
    }
    for key in options:
        if key not in known:
            raise ConfigError(
                f"harness serve: unknown option '{clip(key)}'; expected {', '.join(known)}"
            )
    values = {k: convert_value(v, known[k], k) for k, v in options.items()}
    model = values.get("model", "default")
    path = str(embedded_model_dir()) if model in ("default", "embedded") else model
    served = values.get("served_name") or (
        EMBEDDED_NAME if model in ("default", "embedded") else Path(model).name
    )
    if model == "default-vlm":  # the embedded VLM (untrained vision encoder), built on first use
        from harness.models.vlm import VLM_NAME, embedded_vlm_dir

        path, served = str(embedded_vlm_dir()), values.get("served_name") or VLM_NAME
    console.print(f"starting vLLM on {path} …")
    server = start_vllm_server(
        path,
        served_model_name=served,
        port=values.get("port"),
        host=values.get("host", "127.0.0.1"),
        max_model_len=values.get("max_model_len", 4096),
        dtype=values.get("dtype", "auto"),
        enforce_eager=values.get("enforce_eager"),
    )
    console.print(f"[green]ready[/green] in {server.startup_s:.0f} s")
    console.print(f"base_url: {server.base_url}")
    console.print(f"model:    {served}")
    console.print(f"dtype:    {server.settings['dtype']['reason']}")
    console.print(
        f"use:      harness eval model=vllm/{served} …  (with VLLM_BASE_URL={server.base_url})"
    )
    console.print(f"log:      {server.log_path}  — Ctrl-C or SIGTERM stops the server")
    import signal

    # SIGTERM (and SIGINT, which a background job ignores) end the loop through `finally`.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while server.process.poll() is None:
            time.sleep(1)
        err.print(f"[red]vLLM exited with code {server.process.returncode}[/red]")
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


# ------------------------------------------------------------------------------------- run-all
def cmd_run_all(args: list[str]) -> int:
    """The main job: every task on the embedded default with small limits, then the report."""
    from harness.cli.config import EvalConfig
    from harness.cli.discovery import TaskRegistry, discover_tasks
    from harness.cli.eval import run_eval

    args, wide = _take_flag(args, "--wide")
    options = dict(parse_overrides(args))
    known = {"log_dir", "out", "backend", "tasks", "constrained"}
    for key in options:
        if key not in known:
            raise ConfigError(
                f"harness run-all: unknown option '{clip(key)}'; expected {', '.join(sorted(known))}"
            )
    found = discover_tasks()
    names = sorted(found.tasks)
    if "tasks" in options:
        names = [n for n in options["tasks"].split(",") if n]
        unknown = [n for n in names if n not in found.tasks and n not in found.errors]
        if unknown:
            raise ConfigError(
                f"harness run-all: unknown task(s) {clip(', '.join(unknown))}; "
                f"known: {', '.join(found.tasks)}"
            )
    # Import the chosen tasks; a broken one is reported and skipped, the others run.
    registry = TaskRegistry({n: found.tasks[n] for n in names if n in found.tasks}, {}).loaded()
    if "tasks" not in options:
        names += sorted(found.errors)  # reported below with the reason
    _warn_task_errors({**{n: e for n, e in found.errors.items() if n in names}, **registry.errors})
    names = [n for n in names if n in registry.tasks]
    log_dir = options.get("log_dir", "logs/run-all")
    config = EvalConfig(
        task=names,
        model="default",
        backend=convert_value(
            options.get("backend", "vllm"), Literal["vllm", "transformers"], "backend"
        ),
        log_dir=log_dir,
        display="plain" if not sys.stdout.isatty() else "rich",
        # The small embedded model is measured on skill, not on writing formats (issue 17).
        constrained=convert_value(
            options.get("constrained", "on"), Literal["on", "off"], "constrained"
        ),
    )
    from harness.models.aliases import ModelServers

    # Per-task limits differ, so run tasks one at a time (one model server for all of them).
    started = time.monotonic()
    outcomes = []
    task_seconds: dict[str, float] = {}
    from harness.cli.undefined import collect_undefined

    with (
        _interruptible(log_dir) as interrupt,
        collect_undefined() as undefined,
        ModelServers() as servers,
    ):
        if _run_all_calls_model(config, registry.tasks, names):
            # The shared server starts first and is timed on its own line, so that each task's
            # time is its own (otherwise the first task, whatever it is, pays the start). No
            # server when no chosen task calls the model (agent_stress's scripted agent).
            from harness.models.aliases import resolve_model

            server_started = time.monotonic()
            servers.prepare(resolve_model(config.model, config.backend))
            task_seconds[SERVER_START_ROW] = time.monotonic() - server_started
        for n in names:
            per_task = dict(registry.tasks[n].run_all_args)
            config.task, config.limit = [n], per_task.pop("limit", None)
            console.rule(f"{n} (limit={config.limit}, args={per_task})")
            task_started = time.monotonic()
            outcomes.append(run_eval(config, registry.tasks, {n: per_task}, servers))
            task_seconds[n] = time.monotonic() - task_started
        serving = servers.serving_metadata()
    if interrupt.stopped:
        return 130
    summaries = [s for o in outcomes for s in o.summaries]
    from harness.cli.eval import EvalOutcome

    _print_summary(
        EvalOutcome(all(o.success for o in outcomes), summaries, str(Path(log_dir).resolve())),
        time.monotonic() - started,
        wide,
    )
    _print_task_times(task_seconds, serving)
    _print_undefined(undefined, summaries)
    from reports import build_report

    out_dir = Path(options.get("out", "reports-out"))
    result = build_report(Path(log_dir), out_dir)
    _print_report_result(result)
    console.print(f"[green]report written to {out_dir.resolve()}[/green]")
    return 0 if all(s.status == "success" for s in summaries) else 1


SERVER_START_ROW = "(model server start)"


def _run_all_calls_model(config: Any, tasks: dict[str, Any], names: list[str]) -> bool:
    """Whether any of run-all's tasks, with its RUN_ALL_ARGS, calls the model under test."""
    from dataclasses import replace

    from harness.cli.declared import calls_model

    for name in names:
        args = {k: v for k, v in tasks[name].run_all_args.items() if k != "limit"}
        if calls_model(replace(config, task=[name]), tasks, {name: args}):
            return True
    return False


def _print_task_times(task_seconds: dict[str, float], serving: dict[str, Any]) -> None:
    """`make run`'s wall time per task, the model server's start on its own row."""
    table = Table(title="time per task")
    table.add_column("task")
    table.add_column("seconds", justify="right")
    for name, seconds in task_seconds.items():
        table.add_row(name, f"{seconds:.0f}")
    table.add_row("total", f"{sum(task_seconds.values()):.0f}")
    console.print(table)
    for model, info in serving.items():
        started = f", server started in {info['startup_s']:.0f} s" if "startup_s" in info else ""
        console.print(f"{model}: {info.get('backend')}{started}; {info['dtype']['reason']}")


def entry() -> NoReturn:
    """The `harness` console script: `main`, then a prompt exit.

    After the command is done (logs written, servers stopped, atexit handlers run) the process
    ends without the interpreter's teardown, which with inspect, pydantic and torch loaded takes
    about a second on an idle 2-core machine and several under load, and does nothing a finished
    command needs. Only for the process entry point: `main` itself returns normally.
    """
    try:
        code: int | str | None = main()
    except SystemExit as exc:  # `harness serve` ends through sys.exit on SIGTERM
        code = exc.code
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    atexit._run_exitfuncs()  # logging.shutdown, temp dir finalizers, inspect's trace log, ...
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code if isinstance(code, int) else (0 if code is None else 1))
