"""The offline drafter on real acceptance criteria (`ac_corpus.yaml`: sentences from public
spec-kit, Kiro, OpenSpec and BMAD repositories, each decomposed by hand per SPEC §1). The
share drafted exactly is printed and may not fall below the level reached; non-English
sentences are flagged for manual decomposition, never split."""

from __future__ import annotations

from pathlib import Path

import yaml

from evalflow.domain.baseline_draft import decomposition, draft_ac
from evalflow.domain.models import AcceptanceCriterion

CORPUS = yaml.safe_load((Path(__file__).parent / "ac_corpus.yaml").read_text())
# The share of the corpus drafted exactly when this floor was set; raise it with the drafter.
FLOOR = 0.96


def test_the_corpus_is_real_and_large_enough() -> None:
    assert len(CORPUS) >= 150
    assert len({e["text"] for e in CORPUS}) == len(CORPUS)
    assert len({e["src"].split()[0] for e in CORPUS}) >= 5  # spec-kit, Kiro, OpenSpec, BMAD


def test_share_drafted_exactly_stays_at_its_level(capsys) -> None:
    misses = [(e["text"], e["checks"], list(decomposition(e["text"]))) for e in CORPUS
              if list(decomposition(e["text"])) != e["checks"]]  # fmt: skip
    share = 1 - len(misses) / len(CORPUS)
    with capsys.disabled():
        print(f"\ndrafted exactly: {len(CORPUS) - len(misses)}/{len(CORPUS)} = {share:.3f}")
    assert share >= FLOOR, "\n".join(f"{t}\n  want {w}\n  got  {g}" for t, w, g in misses)


def test_non_english_is_imported_verbatim_and_flagged() -> None:
    manual = [e for e in CORPUS if e["checks"] == ["manual"]]
    assert manual
    for e in manual:
        draft = draft_ac(AcceptanceCriterion(id="A1", text=e["text"], line=1))
        assert [c.kind for c in draft.checks] == ["I", "T"]
        assert e["text"].rstrip(".") in draft.checks[0].proposition
        assert draft.checks[0].rule.startswith("manual")
