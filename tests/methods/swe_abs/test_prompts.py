"""Parsing the model roles' replies: code blocks, diffs, function replacement, judge verdicts."""

from __future__ import annotations

from methods.swe_abs._prompts import (
    code_blocks,
    extract_diff,
    extract_python,
    parse_judge,
    replace_functions,
)

SRC = "import os\n\n\ndef f(a):\n    return a\n\n\nclass A:\n    def m(self):\n        return 1\n\n\nclass B:\n    def m(self):\n        return 2\n"


def test_code_blocks_and_python_extraction():
    reply = "text\n```python\ndef f(a):\n    return a + 1\n```\nmore\n```\nnot python (\n```"
    assert [lang for lang, _ in code_blocks(reply)] == ["python", ""]
    assert extract_python(reply) == "def f(a):\n    return a + 1\n"
    assert extract_python("no code at all") is None
    assert extract_python("```python\ndef broken(:\n```") is None
    assert extract_python("def g():\n    return 2") == "def g():\n    return 2"  # bare code
    assert extract_python("```python\ndef f():\n    return 3\n") is not None  # unterminated


def test_extract_diff():
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert extract_diff(f"here\n```diff\n{diff}```") == diff
    assert extract_diff(f"raw:\n{diff}") == diff
    assert extract_diff("```python\nx = 1\n```") is None


def test_replace_functions_by_name_and_method():
    new, note = replace_functions(SRC, "def f(a):\n    return a * 2\n")
    assert new is not None and "return a * 2" in new and "replaced f" in note
    new, _ = replace_functions(SRC, "class B:\n    def m(self):\n        return 22\n")
    assert new is not None and "return 22" in new and "return 1\n" in new  # A.m untouched
    new, _ = replace_functions(SRC, "def m(self):\n    return 99\n", near_line=15)
    assert new is not None and new.count("return 99") == 1 and "return 1\n" in new  # B.m (line 15)
    assert "        return 99" in new  # re-indented into the class
    assert replace_functions(SRC, "def other():\n    pass\n")[0] is None
    assert replace_functions(SRC, "def f(:\n")[0] is None


def test_parse_judge():
    v = parse_judge("Relevance: Yes\nMutation Validity: No")
    assert (v.relevant, v.valid, v.parsed) == (True, False, True)
    v = parse_judge("**Relevance**: no\n**Mutation Validity**: YES")
    assert (v.relevant, v.valid) == (False, True)
    assert not parse_judge("I think it is fine").parsed
