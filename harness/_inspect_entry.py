"""inspect's entry point as pyproject.toml names it (`icml26_harness = "harness._inspect_entry"`).

An entry point is the outermost layer: this module only loads the app's plugin module
(`harness.cli.inspect_entry`), which registers the tasks and model providers with inspect.
"""

from harness.cli.inspect_entry import PACKAGE, harness_provider, scripted_provider

__all__ = ["PACKAGE", "harness_provider", "scripted_provider"]
