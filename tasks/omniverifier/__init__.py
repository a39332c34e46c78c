"""omniverifier: visual meta-verification with boxes, joint vs decoupled rewards, M1-TTS."""

from tasks.omniverifier.task import RUN_ALL_ARGS, omniverifier

__all__ = ["RUN_ALL_ARGS", "omniverifier"]
