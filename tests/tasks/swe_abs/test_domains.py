"""The bundled instances' input domains (``differential`` in the specs) reach what the function's
documentation admits: the four dev-split domains widened for issue 27 (README, "Chosen on data")
draw, in the explore job's first 300 examples, the documented inputs they once left out. The
strategies are drawn with Hypothesis in a subprocess, with the sandbox's package folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tasks.swe_abs.dataset import BUNDLED, read_records

_JAIL_PARENT = Path(__file__).resolve().parents[3] / "methods" / "swe_abs"
_DRAW = """
import json, sys
sys.path.insert(0, sys.argv[1])
from hypothesis import given
from _jail.calls import settings, strategies
spec = json.loads(sys.argv[2])
drawn = []

@settings({"max_examples": 300, "shrink": False})
@given(**strategies(spec))
def draw(**kwargs):
    drawn.append({k: [type(v).__mro__[-2].__name__, str(v)] for k, v in kwargs.items()})

draw()
print(json.dumps(drawn))
"""


def _drawn(instance_id: str, site: str) -> list[dict[str, list[str]]]:
    records = {r["instance_id"]: r for r in read_records(BUNDLED)}
    spec = records[instance_id]["differential"]
    res = subprocess.run(
        [sys.executable, "-c", _DRAW, str(_JAIL_PARENT), json.dumps(spec)],
        env={**os.environ, "PYTHONPATH": site},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_clamp_draws_other_comparable_types_with_inverted_bounds(swe_abs_site):
    # "Integers, floats, and other comparable types can be mixed."
    drawn = _drawn("mahmoud__boltons-clamp-bounds", swe_abs_site)
    text = [d for d in drawn if all(t == "str" for t, _ in d.values())]
    assert any(d["upper"][1] < d["lower"][1] for d in text), len(text)


def test_ordinalize_draws_strings_that_end_in_white_space(swe_abs_site):
    # "If the last character isn't a digit, it returns the string value unchanged."
    drawn = _drawn("mahmoud__boltons-ordinalize-teens", swe_abs_site)
    assert any(t == "str" and v[:-1].isdigit() and v.endswith(" ") for t, v in
               (d["number"] for d in drawn))  # fmt: skip


def test_parameterize_draws_a_regular_expression_metacharacter_as_separator(swe_abs_site):
    assert any(
        d["sep"][1] == "." for d in _drawn("jpvanhal__inflection-parameterize-trim", swe_abs_site)
    )


def test_dasherize_draws_words_with_white_space(swe_abs_site):
    assert any(" " in d["s"][1] for d in _drawn("jpvanhal__inflection-dasherize-all", swe_abs_site))
