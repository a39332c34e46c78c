"""Sandbox environments for agent tasks: `bwrap` (this package) plus compose files for `docker`."""

from . import bwrap as bwrap  # registers the `bwrap` sandbox with inspect

__all__ = ["bwrap"]
