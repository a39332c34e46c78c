"""SWE-ABS (ICML 2026): adversarial strengthening of a benchmark's tests, as plain Python.

Diff parsing (:mod:`._diff`), the gold patch's program slice (:mod:`._slicing`), operator mutants
with mutmut's families (:mod:`._mutation`), SWE-bench and SWE-ABS grading (:mod:`._grading`),
re-ranking (:mod:`._rerank`), the instance format (:mod:`._instance`), the sandbox workspace and
the warm runner that executes inside it (:mod:`._workspace`, :mod:`._jail`), the model roles'
prompts (:mod:`._prompts`) and the per-instance pipeline (:mod:`._pipeline`). No inspect imports:
the sandbox and the models come in as plain objects and callables.
"""

from methods.swe_abs._diff import (
    FilePatch,
    Hunk,
    PatchError,
    PatchProblem,
    apply_patch,
    check_patch,
    make_patch,
    parse_patch,
)
from methods.swe_abs._grading import abs_failures, flaky_tests, swebench_grade
from methods.swe_abs._instance import (
    Candidate,
    DifferentialSpec,
    Instance,
    InstanceFormatError,
    instance_from_record,
    instance_to_record,
)
from methods.swe_abs._mutation import FAMILIES, Mutant, bytecode_equivalent, generate_mutants
from methods.swe_abs._pipeline import (
    CandidateVerdict,
    InstanceOutcome,
    PipelineConfig,
    Roles,
    Strengthener,
    TextGen,
)
from methods.swe_abs._prompts import (
    JUDGE_FORMAT,
    extract_diff,
    extract_python,
    parse_judge,
    replace_functions,
)
from methods.swe_abs._rerank import (
    Reranking,
    SensitivityResult,
    ordinal_ranks,
    rerank,
    sensitivity,
    spearman,
)
from methods.swe_abs._slicing import MustCover, analyse_source, coverage_rate, must_cover
from methods.swe_abs._solving import solve_instance
from methods.swe_abs._stage_common import static_executed
from methods.swe_abs._workspace import (
    RUNNER_SOURCE,
    RunnerEnv,
    RunnerError,
    SandboxLike,
    Workspace,
    tar_files,
)

__all__ = [
    "SensitivityResult",
    "solve_instance",
    "static_executed",
    "FAMILIES",
    "RUNNER_SOURCE",
    "Candidate",
    "CandidateVerdict",
    "DifferentialSpec",
    "FilePatch",
    "Hunk",
    "Instance",
    "InstanceFormatError",
    "InstanceOutcome",
    "Mutant",
    "MustCover",
    "PatchError",
    "PatchProblem",
    "PipelineConfig",
    "Reranking",
    "Roles",
    "RunnerEnv",
    "RunnerError",
    "SandboxLike",
    "Strengthener",
    "TextGen",
    "Workspace",
    "abs_failures",
    "analyse_source",
    "apply_patch",
    "bytecode_equivalent",
    "check_patch",
    "coverage_rate",
    "extract_diff",
    "extract_python",
    "flaky_tests",
    "generate_mutants",
    "instance_from_record",
    "instance_to_record",
    "make_patch",
    "must_cover",
    "ordinal_ranks",
    "JUDGE_FORMAT",
    "parse_judge",
    "parse_patch",
    "replace_functions",
    "rerank",
    "sensitivity",
    "spearman",
    "swebench_grade",
    "tar_files",
]
