"""Renderer and scene generator: seeds reproduce bytes, error boxes are exact, levels separate."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from methods.omniverifier import ClassicalVerifier, check_scene, sample_rewards
from tasks.omniverifier.render import render, visibility
from tasks.omniverifier.scenes import ERROR_TYPES, SUBTASK_OF, make_pair

_HASH_SNIPPET = """
import hashlib
from tasks.omniverifier.scenes import make_pair, ERROR_TYPES
from tasks.omniverifier.render import render
h = hashlib.sha256()
for i, level in enumerate(["easy", "medium", "hard"]):
    p = make_pair(11, i, level, ERROR_TYPES[i])
    h.update(render(p.consistent).png)
    h.update(render(p.erroneous).png)
print(h.hexdigest())
"""


def _hash_here() -> str:
    h = hashlib.sha256()
    for i, level in enumerate(["easy", "medium", "hard"]):
        p = make_pair(11, i, level, ERROR_TYPES[i])
        h.update(render(p.consistent).png)
        h.update(render(p.erroneous).png)
    return h.hexdigest()


def test_same_seed_gives_byte_identical_pngs_across_processes() -> None:
    other = subprocess.run(
        [sys.executable, "-c", _HASH_SNIPPET], capture_output=True, text=True, check=True
    )
    assert other.stdout.strip() == _hash_here()
    assert (
        render(make_pair(11, 0, "easy", "missing_object").consistent).png
        != render(make_pair(12, 0, "easy", "missing_object").consistent).png
    )


@pytest.mark.parametrize("error_type", ERROR_TYPES)
def test_injected_error_changes_pixels_only_inside_its_box(error_type: str) -> None:
    for index in range(2):
        pair = make_pair(5, index, "medium", error_type)
        assert check_scene(pair.consistent, pair.spec, visible=visibility(pair.consistent)) == []
        violations = check_scene(pair.erroneous, pair.spec, visible=visibility(pair.erroneous))
        assert violations, f"{error_type}: the erroneous scene satisfies the prompt"
        a, b = render(pair.consistent).pixels, render(pair.erroneous).pixels
        rows, cols = np.nonzero((a != b).any(axis=-1))
        assert rows.size, "no pixel changed"
        allowed = [pair.error_box]
        if error_type in ("wrong_relation", "wrong_size"):  # the old place changes too
            moved = {o.box for o in pair.consistent.objects} - {
                o.box for o in pair.erroneous.objects
            }
            allowed += list(moved)
        inside = np.zeros(rows.size, dtype=bool)
        for x1, y1, x2, y2 in allowed:
            inside |= (cols >= x1) & (cols < x2) & (rows >= y1) & (rows < y2)
        assert inside.all(), f"{error_type}: {int((~inside).sum())} changed pixels outside the box"
        assert pair.subtask == SUBTASK_OF[error_type]


def test_counts_reach_twelve_and_objects_overlap_on_hard() -> None:
    counts, overlaps = [], 0
    for i in range(24):
        pair = make_pair(3, i, "hard", "wrong_count")
        counts += [g.count for g in pair.spec.groups]
        boxes = [o.box for o in pair.consistent.objects]
        overlaps += any(
            min(p[2], q[2]) > max(p[0], q[0]) and min(p[3], q[3]) > max(p[1], q[1])
            for j, p in enumerate(boxes)
            for q in boxes[j + 1 :]
        )
        assert min(visibility(pair.consistent)) >= 0.6
    assert max(counts) == 12 and min(counts) == 1 and overlaps > 0
    backgrounds = {make_pair(3, i, "hard", "extra_object").consistent.background for i in range(12)}
    assert len(backgrounds) >= 3 and "plain" not in backgrounds


def test_classical_verifier_falls_from_easy_to_hard() -> None:
    verifier = ClassicalVerifier()
    acc = {}
    for level in ("easy", "hard"):
        outcomes = []
        for i in range(len(ERROR_TYPES)):  # each error type once, true and false
            pair = make_pair(0, i, level, ERROR_TYPES[i])
            for label, scene in ((True, pair.consistent), (False, pair.erroneous)):
                out = verifier.verify(render(scene).pixels, pair.spec)
                outcomes.append(sample_rewards(out, label, [pair.error_box]).r_acc)
        acc[level] = float(np.mean(outcomes))
    assert acc["easy"] >= 0.9 and acc["hard"] <= 0.7, acc


def test_unknown_level_or_error_type() -> None:
    with pytest.raises(ValueError, match="level"):
        make_pair(0, 0, "extreme", "wrong_text")
    with pytest.raises(ValueError, match="error type"):
        make_pair(0, 0, "easy", "wrong_shape")
