import re

from methods.correct import Step, approx_tokens, render_steps, truncate_text


def _steps(lengths):
    return [
        Step(i, f"A{i % 2}", f"A{i % 2}", ("w" * 9 + " ") * (n // 10))
        for i, n in enumerate(lengths)
    ]


def test_fits_untouched():
    steps = _steps([30, 40])
    r = render_steps(steps, 1000)
    assert r.steps_cut == 0 and r.steps_omitted == 0
    assert r.text.splitlines()[0].startswith("Step 0 - A0: ") and r.chars_kept == r.chars_total


def test_waterfill_cuts_only_long_steps_and_keeps_ids():
    steps = _steps([30, 3000, 30, 3000])
    r = render_steps(steps, 400)
    assert r.tokens <= 400
    lines = r.text.splitlines()
    assert [int(re.match(r"Step (\d+)", line).group(1)) for line in lines] == [0, 1, 2, 3]
    assert lines[0].endswith(steps[0].content) and lines[2].endswith(
        steps[2].content
    )  # short steps whole
    assert "…[cut" in lines[1] and "…[cut" in lines[3]
    assert r.steps_cut == 2


def test_head_and_tail_are_kept():
    s = [Step(0, "A", "A", "HEAD " + "x" * 3000 + " TAIL")]
    line = render_steps(s, 200).text
    assert "HEAD" in line and "TAIL" in line


def test_many_steps_omit_middle_with_marker_and_original_ids():
    steps = _steps([50] * 130)
    r = render_steps(steps, 600)
    assert r.steps_omitted > 0 and r.tokens <= 600
    ids = [int(m) for m in re.findall(r"^Step (\d+)", r.text, re.M)]
    assert ids[0] == 0 and ids[-1] == 129 and ids == sorted(ids)
    assert len(ids) == 130 - r.steps_omitted
    m = re.search(r"\[steps (\d+)\.\.(\d+) omitted", r.text)
    assert m and int(m.group(2)) - int(m.group(1)) + 1 == r.steps_omitted


def test_real_tokenizer_like_counter_is_respected():
    def words(t):
        return len(t.split())  # a different counter than the default

    steps = _steps([2000, 2000, 2000])
    assert words(render_steps(steps, 150, words).text) <= 150


def test_empty_and_truncate_text():
    assert render_steps([], 100).text == ""
    assert truncate_text("short", 10) == "short"
    long = "a" * 3000
    assert approx_tokens(truncate_text(long, 100)) <= 100
