"""The evaluation and auditing harness: CLI, run configuration, model back-ends, data and records."""

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
