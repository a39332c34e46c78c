"""`build_once`: the first-use build shared by the embedded model and the embedded VLM."""

import json

import pytest

from harness.models.embedded import build_once


class _BuildError(RuntimeError):
    pass


def test_built_once_with_its_marker(tmp_path):
    calls = []

    def build(staging):
        calls.append(staging)
        (staging / "weights.bin").write_text("w")
        return {"source": "test"}

    target = tmp_path / "models" / "m"
    for _ in range(2):
        assert build_once(target, "done.json", build, _BuildError, "Building") == target
    assert len(calls) == 1 and calls[0] != target
    assert (target / "weights.bin").read_text() == "w"
    assert json.loads((target / "done.json").read_text()) == {"source": "test"}


def test_a_failed_build_leaves_nothing_and_says_what_failed(tmp_path):
    def build(staging):
        (staging / "half.bin").write_text("x")
        raise OSError("disk full")

    target = tmp_path / "m"
    with pytest.raises(_BuildError, match=r"^Building m into .*m failed: disk full$"):
        build_once(target, "done.json", build, _BuildError, "Building m")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".m.lock"]
