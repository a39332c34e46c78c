"""DocVAL (ICML 2026): validated grounded document VQA — VAL, OCR baselines, the model path.

Plain Python (no inspect): the task in ``tasks/docval`` wires these into inspect.
"""

from methods.docval.baseline import BASELINE_RULES, BaselineRule, answer_with_ocr, field_of_question
from methods.docval.gold_free import GoldFreeReport, gold_free_check, snap_to_answer
from methods.docval.model_io import (
    PROMPT_STYLES,
    PromptStyle,
    build_prompt,
    feedback_prompt,
    format_regions,
    parse_output,
    reply_format,
)
from methods.docval.ocr import (
    OCR_ENGINES,
    OcrEngine,
    OcrEngineName,
    OcrUnavailableError,
    RapidOcr,
    TesseractOcr,
    cached_ocr,
    lines_from_words,
    make_ocr_engine,
    words_from_dicts,
    words_to_dicts,
)
from methods.docval.records import correction_record, trace_record, write_jsonl
from methods.docval.text import compact, find_text, group_lines, text_in_box
from methods.docval.types import Prediction, Region, Word, regions_from_dicts, regions_to_dicts
from methods.docval.validator import (
    KEYWORD_GROUPS,
    FeedbackError,
    ValConfig,
    Validator,
    ValReport,
    best_region,
    coordinate_score,
    filter_traces,
    pixel_feedback,
    spatial_score,
    structure_score,
    text_in_regions,
)

__all__ = [
    "BASELINE_RULES",
    "KEYWORD_GROUPS",
    "OCR_ENGINES",
    "PROMPT_STYLES",
    "BaselineRule",
    "FeedbackError",
    "GoldFreeReport",
    "OcrEngine",
    "OcrEngineName",
    "OcrUnavailableError",
    "Prediction",
    "PromptStyle",
    "RapidOcr",
    "Region",
    "TesseractOcr",
    "ValConfig",
    "ValReport",
    "Validator",
    "Word",
    "answer_with_ocr",
    "best_region",
    "build_prompt",
    "cached_ocr",
    "compact",
    "coordinate_score",
    "correction_record",
    "feedback_prompt",
    "field_of_question",
    "filter_traces",
    "find_text",
    "format_regions",
    "gold_free_check",
    "group_lines",
    "lines_from_words",
    "make_ocr_engine",
    "parse_output",
    "pixel_feedback",
    "regions_from_dicts",
    "regions_to_dicts",
    "reply_format",
    "snap_to_answer",
    "spatial_score",
    "structure_score",
    "text_in_box",
    "text_in_regions",
    "trace_record",
    "words_from_dicts",
    "words_to_dicts",
    "write_jsonl",
]
