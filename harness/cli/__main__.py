"""`python -m harness.cli ...`: the `harness` console script."""

from harness.cli.commands import entry

entry()
