"""The offline drafter on real acceptance criteria (`ac_corpus.yaml`: sentences from public
spec-kit, Kiro, OpenSpec and BMAD repositories, each decomposed by hand per SPEC §1). The
share drafted exactly is printed and may not fall below the level reached; non-English
sentences are flagged for manual decomposition, never split."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalflow.domain.baseline_draft import decomposition, draft_ac
from evalflow.domain.models import AcceptanceCriterion

CORPUS = yaml.safe_load((Path(__file__).parent / "ac_corpus.yaml").read_text())
# Read only to measure: three repositories the rules were not written against.
HOLDOUT = yaml.safe_load((Path(__file__).parent / "ac_holdout.yaml").read_text())
# Two public repositories more (a Kiro spec, a spec-kit feature), decomposed by hand before
# the drafter was run on them: 38/49 drafted exactly then; the rules' fixes that followed
# were general (an EARS verb's object list, "and that …", a clause after "but").
HOLDOUT2 = yaml.safe_load((Path(__file__).parent / "ac_holdout2.yaml").read_text())
# Four repositories of the second onboarding round (spec-kit ×2, BMAD v6, Kiro), hand
# decomposed while reading the draft: 53/71 drafted exactly before the rules it prompted (a
# status and a body shared by "respond", fields in a created artefact's subject), 61/71 after.
HOLDOUT3 = yaml.safe_load((Path(__file__).parent / "ac_holdout3.yaml").read_text())
# The blind round (a spec-kit feature, two OpenSpec capabilities), decomposed by hand and
# committed before the drafter ran on it: 59/73 drafted exactly then; the general rules it
# prompted (either-outcome "or", lists of quoted/code items and of verb phrases, a leading
# condition carried with its subject, a SHALL clause in a When, UI lists with fields) 72/73.
HOLDOUT4 = yaml.safe_load((Path(__file__).parent / "ac_holdout4.yaml").read_text())
# A second blind round after those rules (two Kiro-style specs of one more repository): 42/55
# drafted exactly, as before them; 50/55 after the rules it prompted (two verbs of one object,
# modifiers sharing a plural head noun, a list after "via"/"of", a closing scope phrase).
HOLDOUT5 = yaml.safe_load((Path(__file__).parent / "ac_holdout5.yaml").read_text())
# A third blind round (a BMAD v6 project's epics): 26/43 drafted exactly before (25 with the
# drafter as it was at the start of these rounds); 38/43 after the rules it prompted (comma-
# joined clauses and participles, "states that A and B", a negated participle, a created
# record's fields, an "or" in a "before" condition).
HOLDOUT6 = yaml.safe_load((Path(__file__).parent / "ac_holdout6.yaml").read_text())
# The shares drafted exactly when these floors were set; raise them with the drafter.
FLOOR = 0.975
HOLDOUT_FLOOR = 0.88
HOLDOUT2_FLOOR = 0.95
HOLDOUT3_FLOOR = 0.94
HOLDOUT4_FLOOR = 0.98
HOLDOUT5_FLOOR = 0.9
HOLDOUT6_FLOOR = 0.88


def test_the_corpus_is_real_and_large_enough() -> None:
    assert len(CORPUS) >= 150
    assert len({e["text"] for e in CORPUS}) == len(CORPUS)
    assert len({e["src"].split()[0] for e in CORPUS}) >= 5  # spec-kit, Kiro, OpenSpec, BMAD


SETS = [
    ("corpus", CORPUS, FLOOR),
    ("holdout", HOLDOUT, HOLDOUT_FLOOR),
    ("holdout2", HOLDOUT2, HOLDOUT2_FLOOR),
    ("holdout3", HOLDOUT3, HOLDOUT3_FLOOR),
    ("holdout4", HOLDOUT4, HOLDOUT4_FLOOR),
    ("holdout5", HOLDOUT5, HOLDOUT5_FLOOR),
    ("holdout6", HOLDOUT6, HOLDOUT6_FLOOR),
]


@pytest.mark.parametrize(("name", "corpus", "floor"), SETS)
def test_share_drafted_exactly_stays_at_its_level(name, corpus, floor, capsys) -> None:
    misses = [(e["text"], e["checks"], list(decomposition(e["text"]))) for e in corpus
              if list(decomposition(e["text"])) != e["checks"]]  # fmt: skip
    share = 1 - len(misses) / len(corpus)
    with capsys.disabled():
        print(f"\n{name} drafted exactly: {len(corpus) - len(misses)}/{len(corpus)} = {share:.3f}")
    assert share >= floor, "\n".join(f"{t}\n  want {w}\n  got  {g}" for t, w, g in misses)


def test_non_english_is_imported_verbatim_and_flagged() -> None:
    manual = [e for e in CORPUS if e["checks"] == ["manual"]]
    assert manual
    for e in manual:
        draft = draft_ac(AcceptanceCriterion(id="A1", text=e["text"], line=1))
        assert [c.kind for c in draft.checks] == ["I", "T"]
        assert e["text"].rstrip(".") in draft.checks[0].proposition
        assert draft.checks[0].rule.startswith("manual")
