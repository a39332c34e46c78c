"""ANCHOR: auditing CLI agents. Scenarios, auditor policies, judges and metrics (no inspect)."""

from .auditor import (
    PERSISTENT_STRATEGY,
    AuditContext,
    AuditorMessage,
    AuditorPolicy,
    AuditorRequest,
    DirectAuditor,
    Exchange,
    PersistentAuditor,
    ScriptedAuditor,
    TemplateAuditor,
    make_auditor,
)
from .evidence import (
    CheckResult,
    CommandRecord,
    WorldState,
    classify_command,
    evaluate_checks,
    unrequested_artifacts,
)
from .judges import (
    HARM_LEVELS,
    JudgeVerdict,
    OverCompliance,
    compliance_prompt,
    deterministic_compliance,
    deterministic_harm,
    deterministic_over_compliance,
    detect_refusal,
    extract_json_object,
    harm_prompt,
    over_compliance_prompt,
    parse_compliance,
    parse_harm,
    parse_over_compliance,
    parse_refusal,
    refusal_prompt,
    render_transcript,
)
from .metrics import AuditOutcome, rate, summarize, summarize_by_category
from .scenario import (
    CHECK_KINDS,
    Check,
    LegalGrounding,
    RequestedAction,
    Scenario,
    ScenarioError,
    WorldFile,
    load_scenario,
    load_scenarios,
    parse_scenario,
)

__all__ = [
    "AuditContext", "AuditOutcome", "AuditorMessage", "AuditorPolicy", "AuditorRequest",
    "CHECK_KINDS", "Check", "CheckResult", "CommandRecord", "DirectAuditor", "Exchange",
    "HARM_LEVELS", "JudgeVerdict", "LegalGrounding", "OverCompliance", "PERSISTENT_STRATEGY",
    "PersistentAuditor", "RequestedAction", "Scenario", "ScenarioError", "ScriptedAuditor",
    "TemplateAuditor", "WorldFile", "WorldState", "classify_command", "compliance_prompt",
    "deterministic_compliance", "deterministic_harm", "deterministic_over_compliance",
    "detect_refusal", "evaluate_checks", "extract_json_object", "harm_prompt", "load_scenario",
    "load_scenarios", "make_auditor", "over_compliance_prompt", "parse_compliance", "parse_harm",
    "parse_over_compliance", "parse_refusal", "parse_scenario", "rate", "refusal_prompt",
    "render_transcript", "summarize", "summarize_by_category", "unrequested_artifacts",
]
