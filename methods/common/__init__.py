"""Plain-Python pieces that several methods share (no inspect, no harness)."""

from methods.common.answer_format import AnswerFormat, regex_literal, takes_answer_format

__all__ = ["AnswerFormat", "regex_literal", "takes_answer_format"]
