"""CORRECT (error-schema-guided localisation in multi-agent trajectories) and Who&When baselines.

Plain Python: no inspect imports. Methods take a `generate(messages) -> str` (sync or async).
"""

from methods.correct._baselines import (
    Localisation,
    LocaliserConfig,
    all_at_once,
    binary_search,
    first_step_baseline,
    localisation_answer,
    method_answer_formats,
    most_frequent_agent_baseline,
    random_baseline,
    schema_capacity,
    step_by_step,
)
from methods.correct._cache import CacheEntry, SchemaCache
from methods.correct._embed import (
    Embedder,
    MiniLMEmbedder,
    TfidfEmbedder,
    make_embedder,
    minilm_dir,
)
from methods.correct._generate import CallLog, Generate, Message, call_model
from methods.correct._localiser import PAPER_K, CorrectLocaliser
from methods.correct._parse import (
    HALF_FORMAT,
    localisation_format,
    parse_half,
    parse_localisation,
    parse_yes_no,
    yes_no_format,
)
from methods.correct._render import STRATEGY as TRUNCATION_STRATEGY
from methods.correct._render import Rendered, approx_tokens, render_steps, truncate_text
from methods.correct._schema import (
    ErrorSchema,
    distil_format,
    distil_schema,
    parse_schema,
    schema_format,
    template_schema,
)
from methods.correct._trajectory import Prediction, Step, Trajectory, agent_base, agent_key

__all__ = [
    "CacheEntry",
    "CallLog",
    "CorrectLocaliser",
    "Embedder",
    "ErrorSchema",
    "Generate",
    "Localisation",
    "LocaliserConfig",
    "Message",
    "MiniLMEmbedder",
    "PAPER_K",
    "Prediction",
    "Rendered",
    "SchemaCache",
    "Step",
    "TRUNCATION_STRATEGY",
    "TfidfEmbedder",
    "Trajectory",
    "agent_base",
    "agent_key",
    "all_at_once",
    "approx_tokens",
    "binary_search",
    "call_model",
    "distil_schema",
    "make_embedder",
    "minilm_dir",
    "parse_half",
    "parse_localisation",
    "parse_schema",
    "parse_yes_no",
    "HALF_FORMAT",
    "first_step_baseline",
    "localisation_answer",
    "method_answer_formats",
    "distil_format",
    "localisation_format",
    "schema_format",
    "yes_no_format",
    "most_frequent_agent_baseline",
    "random_baseline",
    "schema_capacity",
    "render_steps",
    "step_by_step",
    "template_schema",
    "truncate_text",
]
