"""The harness's library: model back-ends, constrained decoding, data, hub, presets and run records.

The `harness` command and what only it uses live in `harness.cli` (the app), which this library
never imports (`tests/test_layers.py`).
"""

from harness.data import DatasetNotFoundError, content_hash, data_dir, data_path
from harness.records import task_metadata
from harness.version import __version__

__all__ = [
    "DatasetNotFoundError",
    "content_hash",
    "data_dir",
    "data_path",
    "task_metadata",
    "__version__",
]
