"""omniverifier: visual meta-verification with boxes, joint vs decoupled rewards, M1-TTS."""

from tasks.omniverifier.task import RUN_ALL_ARGS, omniverifier

__all__ = ["RUN_ALL_ARGS", "omniverifier"]

# Read from source by the harness (harness/cli/declarations.py); `harness list <task>` shows them.
ROLES = ("generator",)  # mode=tts: the scene generator (default: the model under test)
STRATIFY = "target"  # a small limit draws true and false claims in turn
