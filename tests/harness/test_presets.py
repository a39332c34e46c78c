"""harness.presets: reading and checking presets.yaml, cost expressions, what a run records."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.presets import PresetError, as_argument, evaluate, load_presets, preset_record

COST = """
  cost:
    samples: n
    calls: {model: 1}
    prompt_tokens: {model: 100}
    output_tokens: {model: "max_tokens * 0.5"}
"""


def _write(tmp_path: Path, paper_settings: str, smoke: str = "  settings: {n: 2}\n") -> Path:
    folder = tmp_path / "mytask"
    folder.mkdir(exist_ok=True)
    text = f"min_samples: 10\nsmoke:\n{smoke}{COST}paper:\n  settings:\n{paper_settings}{COST}"
    (folder / "presets.yaml").write_text(text)
    return folder


def test_reads_settings_sources_and_deviations(tmp_path):
    folder = _write(
        tmp_path,
        "    n: {value: 500, source: 'Table 2'}\n"
        "    max_tokens: {value: 64, deviation: 'not stated'}\n"
        "    dataset: {value: a, also: [b, c], source: '§4'}\n",
    )
    presets = load_presets(folder)
    assert presets.task == "mytask" and presets.min_samples == 10
    paper = presets.get("paper")
    assert paper.values() == {"n": 500, "max_tokens": 64, "dataset": "a"}
    assert paper.deviations() == ["max_tokens=64: not stated"]
    assert presets.get("smoke").values() == {"n": 2}  # smoke: plain values, no sources needed


def test_paper_setting_without_source_or_deviation_names_file_and_key(tmp_path):
    folder = _write(tmp_path, "    n: 500\n")
    with pytest.raises(PresetError, match=r"presets.yaml: paper.settings.n: give the paper"):
        load_presets(folder)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("min_samples: 0\nsmoke: {}\npaper: {}\n", "min_samples must be a positive integer"),
        ("min_samples: 5\nsmoke:\n  settings: {}\n" + COST, r"preset\(s\) \['paper'\] missing"),
        ("min_samples: 5\nsmok: {}\n", r"unknown key\(s\) \['smok'\]"),
        ("min_samples: 5\nsmoke:\n  settings: {}\npaper: {}\n", "cost .* is missing"),
        ("[1, 2", "not valid YAML"),
    ],
)
def test_malformed_files_are_refused_by_name(tmp_path, text, message):
    (tmp_path / "presets.yaml").write_text(text)
    with pytest.raises(PresetError, match=message):
        load_presets(tmp_path)


def test_missing_file_and_unknown_preset(tmp_path):
    with pytest.raises(PresetError, match="has no presets file"):
        load_presets(tmp_path)
    folder = _write(tmp_path, "    n: {value: 5, source: x}\n")
    with pytest.raises(PresetError, match="has no preset 'full'"):
        load_presets(folder).get("full")


def test_cost_roles_need_token_counts(tmp_path):
    bad = COST.replace("prompt_tokens: {model: 100}", "prompt_tokens: {}")
    (tmp_path / "presets.yaml").write_text(
        f"min_samples: 1\nsmoke:\n  settings: {{}}\n{bad}paper:\n  settings: {{}}\n{bad}"
    )
    with pytest.raises(PresetError, match=r"role\(s\) \['model'\] have calls but no token"):
        load_presets(tmp_path)


@pytest.mark.parametrize(
    ("expr", "names", "value"),
    [
        (3, {}, 3.0),
        ("n * 2 + 1", {"n": 5}, 11.0),
        ("min(limit, 126) if limit != None else 184", {"limit": None}, 184.0),
        ("min(limit, 126) if limit != None else 184", {"limit": 3}, 3.0),
        (
            "len(scenarios) * (2 if auditor == 'both' else 1)",
            {"scenarios": "a,b", "auditor": "both"},
            4.0,
        ),
        ("1 if method in ['correct', 'all_at_once'] else 0", {"method": "all_at_once"}, 1.0),
        ("len(seeds)", {"seeds": [0, 1, 2]}, 3.0),
        ("ceil(n / 4)", {"n": 5}, 2.0),
    ],
)
def test_cost_expressions(expr, names, value):
    assert evaluate(expr, names) == value


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("n + m", "unknown name 'm'"),
        ("__import__('os').getcwd()", "unsupported expression"),
        ("n.real", "unsupported expression"),
        ("n / 0", "cannot evaluate"),
        (True, "expected a number or an expression"),
    ],
)
def test_bad_expressions_are_errors(expr, message):
    with pytest.raises(PresetError, match=message):
        evaluate(expr, {"n": 1}, where="t.cost.samples")


def test_record_tells_overrides_from_protocol_choices_and_additions(tmp_path):
    folder = _write(
        tmp_path,
        "    n: {value: 500, source: 'Table 2'}\n"
        "    dataset: {value: a, also: [b], source: '§4'}\n"
        "    seeds: {value: [0, 1], source: '§5'}\n",
    )
    paper = load_presets(folder).get("paper")
    clean = preset_record(paper, {"seeds": "0,1"}, paper.values())  # same value, CLI spelling
    assert clean["overrides"] == {} and clean["protocol_met"] is True
    chosen = preset_record(paper, {"dataset": "b"}, {"n": 500})
    assert chosen["within_protocol"] == {"dataset": "b"} and chosen["protocol_met"] is True
    changed = preset_record(paper, {"n": "20", "limit": "5"}, {"dataset": "a"})
    assert changed["overrides"] == {"n": "20"} and changed["added"] == {"limit": "5"}
    assert changed["protocol_met"] is False
    assert "n=20 overrides preset paper's n=500" in changed["deviations"]
    assert "limit=5 added to preset paper" in changed["deviations"]
    smoke = preset_record(load_presets(folder).get("smoke"), {}, {"n": 2})
    assert smoke["protocol_met"] is False  # only the paper preset is the paper's protocol


def test_as_argument_spells_values_as_the_command_line():
    assert [as_argument(v) for v in (None, True, [0, 1], 1e-4, "x")] == [
        "none",
        "true",
        "0,1",
        "0.0001",
        "x",
    ]
