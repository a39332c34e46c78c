"""docval: grounded document VQA (DocVAL): ANLS, mAP@[.50:.95], VAL; OCR and model baselines."""

from tasks.docval.task import RUN_ALL_ARGS, docval

__all__ = ["RUN_ALL_ARGS", "docval"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
ROLES = ("teacher",)  # method=distill
