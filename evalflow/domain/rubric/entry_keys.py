"""The evaluation-key convention of evalflow's ledger entries.

River Review's ledger entry has one free-text field, `description`; evalflow writes
`<kind>:<key>` there so one ledger can hold every kind of evaluation and a comparison can pair
entries of the same evaluation:

| kind                | key                      | written by                         |
|---------------------|--------------------------|------------------------------------|
| `framework_run`     | the run's `run_key`      | a framework run's scoring          |
| `judge_calibration` | the judge id             | judge calibration (SPEC §1)        |
| `plugin_score`      | the skill / plugin name  | PluginEval (SPEC §2)               |
| `retrieval_eval`    | the retriever name       | the retrieval harness (SPEC §4)    |
| `review_eval`       | the reviewer name        | review-fixture evaluation (SPEC §3)|

The whole description is the entry key. A description whose prefix is not one of these kinds
(an entry written by River Review itself, say) still groups by its full text but has no kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalflow.errors import InputError

ENTRY_KINDS: tuple[str, ...] = (
    "framework_run",
    "judge_calibration",
    "plugin_score",
    "retrieval_eval",
    "review_eval",
)


@dataclass(frozen=True, slots=True)
class EntryKey:
    """A parsed description: the full key, its kind (None if unknown) and the part after it."""

    key: str
    kind: str | None
    name: str | None

    @property
    def run_key(self) -> str | None:
        """The framework run's `run_key` for `framework_run` entries, else None."""
        return self.name if self.kind == "framework_run" else None


def format_entry_key(kind: str, name: str) -> str:
    """`<kind>:<name>`; InputError for an unknown kind or an empty or multi-line name."""
    if kind not in ENTRY_KINDS:
        raise InputError(
            f"unknown evaluation kind {kind!r}", fix=f"use one of {', '.join(ENTRY_KINDS)}"
        )
    if not name.strip() or "\n" in name:
        raise InputError(f"evaluation name {name!r} must be non-empty and on one line")
    return f"{kind}:{name}"


def parse_entry_key(description: str | None) -> EntryKey:
    """Split a ledger entry's description into key, kind and name (absent description: key "")."""
    key = description or ""
    kind, sep, name = key.partition(":")
    if sep and kind in ENTRY_KINDS and name:
        return EntryKey(key=key, kind=kind, name=name)
    return EntryKey(key=key, kind=None, name=None)
