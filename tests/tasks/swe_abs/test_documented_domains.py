"""The documented domains (``tasks/swe_abs/specs/domains.yaml``): every argument of every bundled
instance's call has an entry, every kind is one the near inputs know and rests on a quoted
``because``, and the bundled instances carry exactly those kinds (what ``build.py`` attaches)."""

from __future__ import annotations

from methods.swe_abs._jail.near import DOCUMENTED_KINDS, domains
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


def test_bundled_instances_carry_exactly_the_documented_kinds():
    documented = load_domains()
    for rec in read_records(BUNDLED):
        diff = rec["differential"]
        base = {k: v for k, v in diff.items() if k != "domains"}
        assert with_domains(base, documented[rec["instance_id"]]) == diff, rec["instance_id"]
        wanted = {a: frozenset(k) for a, k in documented[rec["instance_id"]].items() if k}
        assert domains(diff) == wanted
