"""What an AC fixes in its own words becomes candidate probes: routes (parameters as any
segment), quoted strings and code spans (an object literal gives its names and values, not its
layout), snake_case/camelCase names; values, placeholders and globs are not identifiers."""

from __future__ import annotations

from evalflow.domain.baseline_draft import DraftCheck, draft_ac
from evalflow.domain.models import AcceptanceCriterion
from evalflow.domain.patterns import compile_untrusted
from evalflow.domain.probe_proposals import candidates, fixed_identifiers, pattern_for


def test_fixed_identifiers_of_real_ac_wording() -> None:
    text = (
        "Given the `PATCH /api/tasks/:id` call fails Then the server returns `401` with "
        '`{ statusCode: 401, error: "UNAUTHORIZED" }` and shows "Invalid email or password"; '
        "it emits trial_started with userId; `categories/<NN-name>/*.toml` is read"
    )
    assert fixed_identifiers(text) == (
        "/api/tasks/:id",
        "statusCode",
        "UNAUTHORIZED",
        "Invalid email or password",
        "trial_started",
        "userId",
    )


def test_a_route_parameter_matches_any_segment_and_metacharacters_are_literal() -> None:
    route = compile_untrusted(pattern_for("/api/tasks/:id"))
    assert route.search("router.patch('/api/tasks/:taskId', h)")
    assert route.search('app.patch("/api/tasks/{id}")')
    assert not route.search("/api/tasks")
    assert compile_untrusted(pattern_for("Error: (x)")).search("raise Error: (x)")


def test_candidates_are_the_identifiers_a_check_names() -> None:
    ac = "When a trial starts, it emits `trial_started` and answers `POST /trials` with 201."
    i_check = DraftCheck("A1-I1", "I", "It emits `trial_started`.", "clause")
    t_check = DraftCheck("A1-T1", "T", "A unit test asserts it emits `trial_started`.", "x", "unit")
    wiring = DraftCheck("A1-I2", "I", "`trial_started` is routed.", "wiring", wiring=True)
    (probe,) = candidates(i_check, ac)
    assert (probe.kind, probe.pattern, probe.proposed) == ("impl", "trial_started", True)
    assert [p.kind for p in candidates(t_check, ac)] == ["test-assert"]
    assert candidates(wiring, ac) == ()


def test_an_identifier_of_the_context_is_no_candidate() -> None:
    # Found on a real OpenSpec project: `/dev/login` matched for every check of its page.
    ac = "WHEN a developer navigates to `/dev/login`; THEN the page shows a `GolferList`"
    check = DraftCheck(
        "A1-I1",
        "I",
        "When a developer navigates to `/dev/login`, the page shows a `GolferList`.",
        "x",
    )
    assert [p.pattern for p in candidates(check, ac)] == ["GolferList"]


def test_an_ears_context_in_sentence_case_is_no_candidate() -> None:
    # foxey/imaprest: the draft writes "WHEN a GET request is received at `/mailboxes/…`" as
    # "When a GET request …"; the route stayed in the behaviour and matched the MCP client's
    # URL builder for "return only messages with UIDs less than the cursor" (a false MET).
    ac = (
        "WHEN a GET request is received at `/mailboxes/:mailbox/messages` with a `cursor`, THE "
        "REST_API SHALL set `nextCursor` to null"
    )
    draft = draft_ac(AcceptanceCriterion(id="R1-AC7", text=ac, line=1))
    (check,) = [c for c in draft.checks if c.kind == "I"]
    assert check.proposition.startswith("When a GET request is received at `/mailboxes/")
    (probe,) = candidates(check, ac)
    assert probe.pattern.startswith("nextCursor") and "mailboxes" not in probe.pattern


def test_a_plain_word_is_no_identifier() -> None:
    # Found on a real BMAD v6 project: `Expense`, "status", "Private" matched everywhere.
    text = (
        'The `Expense` schema has `status` and `userId`; the log records "Private" to "Org Shared"'
    )
    assert fixed_identifiers(text) == ("userId", "Org Shared")


def test_a_pascal_case_compound_is_an_identifier() -> None:
    # Found on a real OpenSpec project (C# API): its ACs name classes and exceptions bare.
    text = (
        "THEN the MockAuthProvider is registered; WHEN Auth0AuthProvider.ValidateTokenAsync "
        "is called THEN it throws NotImplementedException; the Button and Avatar render"
    )
    assert fixed_identifiers(text) == (
        "MockAuthProvider",
        "Auth0AuthProvider.ValidateTokenAsync",
        "NotImplementedException",
    )


def test_a_field_the_ac_says_is_set_is_probed_as_an_assignment() -> None:
    # Found on a real OpenSpec project: `UpdatedAt` matched its declaration
    # (`public DateTime UpdatedAt { get; set; }`) though nothing ever set it: a false MET.
    ac = "WHEN a record is inserted; THEN CreatedAt and UpdatedAt are set to the current UTC time"
    check = DraftCheck(
        "A1-I1", "I", "When a record is inserted, CreatedAt and UpdatedAt are set to the time.", "x"
    )
    patterns = [p.pattern for p in candidates(check, ac)]
    assert patterns == [r"CreatedAt\s*=[^=>]", r"UpdatedAt\s*=[^=>]"]
    assigned = compile_untrusted(patterns[1])
    assert assigned.search("entity.UpdatedAt = DateTime.UtcNow;")
    assert not assigned.search("public DateTime UpdatedAt { get; set; }")
    assert not assigned.search("if (x.UpdatedAt == y)")
    shown = DraftCheck("A1-I2", "I", "The MockAuthProvider is registered.", "x")
    assert [p.pattern for p in candidates(shown, "THEN the MockAuthProvider is registered")] == [
        "MockAuthProvider"
    ]


def test_a_field_of_a_quoted_object_literal_needs_a_value_not_its_declaration() -> None:
    # foxey/imaprest: "include … `{ "messages": [...], "nextCursor": <uid|null>, "hasMore":
    # <boolean> }`" and "set `nextCursor` to null" were MET on `nextCursor: number | null;`, the
    # response type's declaration, not the constructed response.
    ac = (
        'THE REST_API SHALL include Pagination_Metadata as `{ "messages": [...], "nextCursor": '
        "<uid|null> }`"
    )
    check = DraftCheck("R1-AC5-I1", "I", ac.split("SHALL ")[1], "x")
    set_to = DraftCheck("R1-AC7-I1", "I", "It sets `nextCursor` to null.", "x")
    for probe in (*candidates(check, ac), *candidates(set_to, "SHALL set `nextCursor` to null")):
        pattern = compile_untrusted(probe.pattern)
        assert not pattern.search("  nextCursor: number | null;")
        assert not pattern.search("  nextCursor?: number;")
        assert pattern.search("  nextCursor: hasMore ? page.at(-1).uid : null,")
        assert pattern.search("      nextCursor: sorted[limit - 1],")
        assert pattern.search("  body.nextCursor = null;")


def test_a_negative_behaviour_gets_no_identifier_probe() -> None:
    # Alberto-Codes/docvet: "returns zero findings for `missing-raises`" was MET on the line
    # that builds the missing-raises finding (the positive path), and its T-check on a test
    # asserting that a finding IS returned; a name proves nothing of its absence.
    zero = "it returns zero findings for `missing-raises`"
    ac = f"Given a `Raises:` section, when `check_enrichment` runs, {zero}"
    i_check = DraftCheck("S1.4-AC3-I1", "I", f"{zero}.", "x")
    t_check = DraftCheck("S1.4-AC3-T1", "T", f"A unit test asserts {zero}.", "x")
    assert candidates(i_check, ac) == () and candidates(t_check, ac) == ()
    positive = DraftCheck("S1.4-AC1-I1", "I", "It returns a `Finding` with `missing-raises`.", "x")
    assert candidates(positive, "it returns a `Finding` with `missing-raises`")
    shouted = DraftCheck("S3.2-AC7-I1", "I", "It does NOT produce a `missing-raises` finding.", "x")
    assert candidates(shouted, "it does NOT produce a `missing-raises` finding") == ()
    returns_none = DraftCheck("S1.3-AC7-I1", "I", "`node_index.get()` returns `None`.", "x")
    assert candidates(returns_none, "`node_index.get()` returns `None`")
    # A name that starts with "Not" is no negation.
    raised = DraftCheck("R1-AC1-I1", "I", "A `NotImplementedException` is thrown.", "x")
    assert candidates(raised, "a `NotImplementedException` is thrown")
