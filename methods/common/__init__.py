"""Plain-Python pieces that several methods share (no inspect, no harness)."""

from methods.common._answer_format import AnswerFormat, regex_literal, takes_answer_format
from methods.common._micro_batch import MicroBatcher

__all__ = ["AnswerFormat", "MicroBatcher", "regex_literal", "takes_answer_format"]
