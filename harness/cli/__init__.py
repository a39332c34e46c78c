"""The harness's app: the `harness` command and what only it uses.

`main` (the subcommands), `config` (key=value options), `discovery` (the task registry read from
source), `eval` (one eval-set), `executors` (grids), `summary` (the closing table),
`data_command` (`harness data`) and `inspect_entry` (inspect's plugin: tasks and model
providers). Everything else in `harness/` is the library tasks build on, and never imports this
package (`tests/test_layers.py`).
"""

from harness.cli.commands import HELP, USAGE, entry, main

__all__ = ["HELP", "USAGE", "entry", "main"]
