"""Unified diffs: parsing, applying like git apply (offsets, no fuzz), malformed patches."""

from __future__ import annotations

import pytest

from methods.swe_abs._diff import PatchError, apply_patch, check_patch, make_patch, parse_patch

OLD = "a\nb\nc\nd\ne\n"
NEW = "a\nb\nX\nd\ne\nf\n"


def test_make_and_parse_round_trip():
    patch = make_patch("m.py", OLD, NEW)
    [fp] = parse_patch(patch)
    assert (fp.source_path, fp.target_path) == ("m.py", "m.py")
    [hunk] = fp.hunks
    assert (hunk.source_start, hunk.source_length, hunk.target_start, hunk.target_length) == (
        1,
        5,
        1,
        6,
    )
    assert fp.added_lines() == [3, 6]  # line numbers in the patched file
    assert hunk.removed_lines() == [3]
    assert apply_patch({"m.py": OLD}, patch) == {"m.py": NEW}


def test_apply_finds_a_shifted_hunk_but_never_fuzzes():
    patch = make_patch("m.py", OLD, NEW)
    assert apply_patch({"m.py": "top\n" + OLD}, patch)["m.py"] == "top\n" + NEW
    with pytest.raises(PatchError) as err:
        apply_patch({"m.py": OLD.replace("d", "D")}, patch)
    assert err.value.reason == "does_not_apply"


def test_pure_deletion_marks_the_following_line():
    patch = make_patch("m.py", OLD, "a\nb\nd\ne\n")
    [fp] = parse_patch(patch)
    assert fp.added_lines() == []
    assert fp.changed_lines() == [3]  # 'd' now sits where 'c' was removed


def test_no_newline_at_end_of_file_both_ways():
    patch = make_patch("m.py", "a\nb", "a\nc")
    assert "\\ No newline at end of file" in patch
    assert apply_patch({"m.py": "a\nb"}, patch)["m.py"] == "a\nc"
    added = make_patch("m.py", "a\nb", "a\nb\n")
    assert apply_patch({"m.py": "a\nb"}, added)["m.py"] == "a\nb\n"


def test_new_and_deleted_files():
    new = "--- /dev/null\n+++ b/pkg/new.py\n@@ -0,0 +1,2 @@\n+x = 1\n+y = 2\n"
    assert apply_patch({}, new) == {"pkg/new.py": "x = 1\ny = 2\n"}
    gone = "--- a/m.py\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    assert apply_patch({"m.py": "a\nb\n"}, gone) == {"m.py": None}


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("just some prose, no diff", "empty"),
        ("--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n a\n", "malformed"),
        ("--- a/m.py\n+++ b/m.py\n@@ nonsense @@\n", "malformed"),
        ("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "outside_repo"),
        ("--- a//etc/passwd\n+++ b//etc/passwd\n@@ -1 +1 @@\n-a\n+b\n", "outside_repo"),
        ("--- a/.git/config\n+++ b/.git/config\n@@ -1 +1 @@\n-a\n+b\n", "outside_repo"),
        ("--- a/missing.py\n+++ b/missing.py\n@@ -1 +1 @@\n-a\n+b\n", "does_not_apply"),
    ],
)
def test_malformed_patches_are_named(patch, reason):
    changed, problem = check_patch({"m.py": OLD}, patch)
    assert changed == {}
    assert problem is not None and problem.reason == reason, problem


def test_syntax_error_and_no_op_are_problems():
    _, problem = check_patch({"m.py": "x = 1\n"}, make_patch("m.py", "x = 1\n", "x = (\n"))
    assert problem is not None and problem.reason == "syntax_error"
    assert "m.py:1" in problem.message
    _, problem = check_patch(
        {"m.py": "x = 1\n"}, "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 1\n"
    )
    assert problem is not None and problem.reason == "empty"


def test_a_good_patch_passes_the_check():
    changed, problem = check_patch({"m.py": "x = 1\n"}, make_patch("m.py", "x = 1\n", "x = 2\n"))
    assert problem is None and changed == {"m.py": "x = 2\n"}
