"""Which probe failures prove absence in any implementation, and the portability lint."""

from __future__ import annotations

from evalflow.domain.models import Baseline, BaselineAC, Check, CheckedRun, CheckedRuns, Probe
from evalflow.domain.portability import (
    absence_tokens,
    fixed_identifiers,
    literal_text,
    pinned,
    portability_findings,
    portable_probes,
)


def test_fixed_identifiers_are_the_names_an_ac_spells_for_every_implementation() -> None:
    text = (
        "When a visitor signs up (`POST /trials`), a `trial_started` event carries trialEndsAt; "
        'objects are rejected with "Invalid input" and 409. The user\'s text is saved.'
    )
    assert fixed_identifiers(text) == (
        "POST",
        "/trials",
        "trial_started",
        "Invalid input",
        "trialEndsAt",
        "409",
    )


def test_literal_text_drops_regex_syntax_and_keeps_escaped_characters() -> None:
    assert literal_text(r'assert .*\["clicks"\]\s*==\s*\d+').split() == [
        "assert",
        '["clicks"]',
        "==",
    ]
    assert literal_text(r"(?i)both fields (are )?required").split() == [
        "both",
        "fields",
        "are",
        "required",
    ]


def test_a_probe_pins_an_identifier_it_spells_out() -> None:
    ids = ("POST", "/api/conversations/{id}", "Invalid input", "404")
    assert pinned(r'@app\.post\(\s*"/api/conversations/', ids) == (
        "POST",
        "/api/conversations/{id}",
    )
    assert pinned(r"(?i)assert .*invalid\s+input", ids) == ("Invalid input",)
    assert pinned(r"assert .*Invalid input", ids) == ("Invalid input",)
    assert pinned(r"role\s*=\s*MessageRole\.USER", ids) == ()


def test_a_route_is_absent_when_one_of_its_fixed_segments_is() -> None:
    assert absence_tokens("/api/conversations/{id}") == ("api", "conversations")
    assert absence_tokens("Invalid  Input") == ("invalid input",)


def test_a_probe_is_portable_where_it_matched_in_two_other_frameworks() -> None:
    record = CheckedRuns(
        runs=(
            CheckedRun(run="b.speckit.r1", framework="speckit", head="a"),
            CheckedRun(run="b.speckit.r2", framework="speckit", head="b"),
            CheckedRun(run="b.kiro.r1", framework="kiro", head="c"),
            CheckedRun(run="b.bmad.r1", framework="bmad", head="d"),
        ),
        matched={
            "I1": (("b.kiro.r1", "b.speckit.r1"), ("b.speckit.r1", "b.speckit.r2")),
        },
    )
    assert portable_probes(record, "b.bmad.r1") == {("I1", 1)}
    # The judged run's own match does not count: kiro is left with speckit alone.
    assert portable_probes(record, "b.kiro.r1") == frozenset()
    assert portable_probes(None, "b.bmad.r1") == frozenset()


def test_a_sibling_run_of_the_judged_framework_is_one_of_the_two_witnesses() -> None:
    # The rule decided for issue 24: runs other than the judged one, of two frameworks; the
    # judged run's own framework may be one of them, one framework alone never suffices.
    runs = (
        CheckedRun(run="b.speckit.r1", framework="speckit", head="a"),
        CheckedRun(run="b.speckit.r2", framework="speckit", head="b"),
        CheckedRun(run="b.speckit.r3", framework="speckit", head="c"),
        CheckedRun(run="b.kiro.r1", framework="kiro", head="d"),
        CheckedRun(run="b.kiro.r2", framework="kiro", head="e"),
    )
    record = CheckedRuns(
        runs=runs,
        matched={
            "sibling-and-other": (("b.speckit.r2", "b.kiro.r1"),),
            "own-framework-only": (("b.speckit.r2", "b.speckit.r3"),),
            "one-other-framework-only": (("b.kiro.r1", "b.kiro.r2"),),
        },
    )
    assert portable_probes(record, "b.speckit.r1") == {("sibling-and-other", 1)}
    # For a kiro run the same record reads: kiro r1 + speckit r2 (sibling-and-other), speckit
    # r2 + r3 (one framework), kiro r1 alone besides itself.
    assert portable_probes(record, "b.kiro.r2") == {("sibling-and-other", 1)}
    assert portable_probes(record, "b.kiro.r1") == frozenset()


def test_runs_named_by_folder_prove_nothing() -> None:
    # A drafted record names its --repo runs by folder: the judged run's own folder must not
    # pass for another framework.
    record = CheckedRuns(
        runs=(
            CheckedRun(run="speckit", framework="speckit", head="a"),
            CheckedRun(run="bmad", framework="bmad", head="b"),
            CheckedRun(run="b.kiro.r1", framework="kiro", head="d"),
        ),
        matched={"I1": (("speckit", "bmad", "b.kiro.r1"),)},
    )
    assert portable_probes(record, "b.bmad.r1") == frozenset()
    named = record.model_copy(
        update={
            "runs": (*record.runs, CheckedRun(run="b.speckit.r1", framework="speckit", head="e"))
        }
    )
    named = named.model_copy(update={"matched": {"I1": (("b.speckit.r1", "b.kiro.r1"),)}})
    assert portable_probes(named, "b.bmad.r1") == {("I1", 1)}


def test_portability_findings_flag_a_probe_fitted_to_one_run() -> None:
    check = Check(
        id="I1",
        kind="I",
        proposition="p",
        probes=(
            Probe(kind="impl", pattern=r"save_message\(", path_globs=("backend/src/**.py",)),
            Probe(kind="impl", pattern=r"/conversations", path_globs=("backend/**",)),
        ),
    )
    baseline = Baseline(
        benchmark="b", prd="prd.md", acs=(BaselineAC(id="AC1", text="t", checks=(check,)),)
    )
    layouts = {
        "b.claude.r1": ("backend/src/storage.py",),
        "b.codex.r1": ("backend/app/storage.py",),
    }
    matched = {"I1": (("b.claude.r1",), ("b.claude.r1", "b.codex.r1"))}
    lines = [
        f.line() for f in portability_findings(baseline, matched, layouts, "GET /conversations")
    ]
    assert lines == [
        "I1 probe 1: matches only in b.claude.r1 of 2 runs",
        "I1 probe 1: glob 'backend/src/**.py' is rooted under b.claude.r1's layout only "
        "(the other runs changed no file there)",
        "I1 probe 1: names in no PRD text: save_message (an implementation's idiom)",
    ]


def test_the_report_line_counts_proven_and_unproven_absences() -> None:
    from evalflow.domain.portability import absence_line

    rows = [
        ("UNMET", ["absence-proven"]),
        ("UNMET", ["absence-proven", "evidence-invalid"]),
        ("UNMET", []),
        ("UNMET", ["run-failed"]),
        ("UNSCORED", ["no-portable-proof"]),
        ("MET", []),
    ]
    assert absence_line(rows) == (
        "UNMET: 3 proven (2 absent by a portable search, 1 failed an executable acceptance "
        "check), 1 judged otherwise; 1 UNSCORED with no portable proof of absence (SPEC §5: "
        "one baseline, every implementation alike)."
    )
    assert absence_line([("MET", [])]) is None
