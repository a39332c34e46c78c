"""The evaluation and auditing harness: CLI, run configuration, model back-ends, data and records."""

from harness.data import DatasetNotFoundError, content_hash, data_dir, data_path
from harness.records import task_metadata

__version__ = "0.1.0"

__all__ = [
    "DatasetNotFoundError",
    "content_hash",
    "data_dir",
    "data_path",
    "task_metadata",
    "__version__",
]
