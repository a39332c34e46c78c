"""The harness's version, recorded in every log (kept apart so modules below `harness` read it
without importing the package's `__init__`)."""

__version__ = "0.1.0"
