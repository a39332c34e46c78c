"""The documented domains (``tasks/swe_abs/specs/domains.yaml``): every argument of every bundled
instance's call has an entry, every kind is one the near inputs know and rests on a quoted
``because``, every documented value is a Python literal with a ``values_because``, and the
bundled instances carry exactly those kinds and values (what ``build.py`` attaches)."""

from __future__ import annotations

import ast

from methods.swe_abs._jail.near import DOCUMENTED_KINDS, domain_values, domains
from tasks.swe_abs.build import DOMAINS_FILE, SPEC_DIR, load_domains, with_domains
from tasks.swe_abs.dataset import BUNDLED, read_records


def test_every_argument_of_every_instance_has_an_entry_with_known_kinds_and_a_reason():
    import yaml

    doc = yaml.safe_load((SPEC_DIR / DOMAINS_FILE).read_text(encoding="utf-8"))
    records = {r["instance_id"]: r for r in read_records(BUNDLED)}
    assert sorted(doc) == sorted(records)
    problems = []
    for iid, args in doc.items():
        declared = set(records[iid]["differential"]["args"])
        if set(args) != declared:
            problems.append((iid, "arguments", sorted(set(args) ^ declared)))
        for name, entry in args.items():
            kinds = entry.get("kinds") or []
            if set(kinds) - set(DOCUMENTED_KINDS):
                problems.append((iid, name, sorted(set(kinds) - set(DOCUMENTED_KINDS))))
            if kinds and not str(entry.get("because", "")).strip():
                problems.append((iid, name, "no because"))
    assert problems == []


def test_documented_values_are_literals_with_a_reason():
    import yaml

    doc = yaml.safe_load((SPEC_DIR / DOMAINS_FILE).read_text(encoding="utf-8"))
    problems = []
    for iid, args in doc.items():
        for name, entry in args.items():
            values = entry.get("values") or []
            if values and not str(entry.get("values_because", "")).strip():
                problems.append((iid, name, "no values_because"))
            for text in values:
                try:
                    ast.literal_eval(str(text))
                except (ValueError, SyntaxError) as exc:
                    problems.append((iid, name, text, str(exc)))
    assert problems == []


def test_bundled_instances_carry_exactly_the_documented_kinds_and_values():
    documented = load_domains()
    for rec in read_records(BUNDLED):
        diff = rec["differential"]
        base = {k: v for k, v in diff.items() if k not in ("domains", "domain_values")}
        assert with_domains(base, documented[rec["instance_id"]]) == diff, rec["instance_id"]
        entries = documented[rec["instance_id"]]
        wanted = {a: frozenset(e["kinds"]) for a, e in entries.items() if e["kinds"]}
        assert domains(diff) == wanted
        listed = {a: tuple(ast.literal_eval(v) for v in e["values"])
                  for a, e in entries.items() if e["values"]}  # fmt: skip
        assert domain_values(diff) == listed
