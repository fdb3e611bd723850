"""A hostile skill folder: nothing outside it is read or reaches a judge prompt, special files
are refused without being opened, and size caps hold — each refusal is a finding."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from evalflow.cli import main
from evalflow.domain.plugineval.evaluate import EvalOptions
from evalflow.domain.plugineval.judge_layer import JudgeInput
from evalflow.domain.plugineval.parser import parse_skill
from evalflow.errors import InputError
from evalflow.io.plugineval import (
    MAX_FILE_BYTES,
    MAX_SKILL_BYTES,
    evaluate_path,
    read_skill_files,
    reference_texts,
)

SECRET = "sibling-secret-6f1c"
SKILL = (
    "---\nname: hostile\ndescription: Use when testing hostile skill folders safely.\n---\n"
    "# Hostile\nSee [passwd](references/passwd), [peer](references/peer.md), "
    "[ok](references/ok.md) and [probe](" + "../" * 40 + "etc/hostname).\n"
)


class CapturingJudge:
    """Records what a judge would be sent, then fails (the layer records the failure)."""

    name = "capture"

    def __init__(self) -> None:
        self.inputs: list[JudgeInput] = []

    def judge(self, skill: JudgeInput):
        self.inputs.append(skill)
        raise RuntimeError("captured")


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    plugin = tmp_path / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p"}))
    sibling = tmp_path / "sibling"
    sibling.mkdir()
    (sibling / "secret.md").write_text(f"# {SECRET}\n")
    skill = plugin / "skills" / "hostile"
    refs = skill / "references"
    refs.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    (refs / "ok.md").write_text("# fine\n")
    (refs / "passwd").symlink_to("/etc/passwd")
    (refs / "peer.md").symlink_to(sibling / "secret.md")
    (refs / "zero").symlink_to("/dev/zero")
    (refs / "linked-dir").symlink_to(sibling, target_is_directory=True)
    (skill / "assets").symlink_to(sibling, target_is_directory=True)
    return skill


def _codes(findings) -> list[tuple[str, str | None]]:
    return sorted((f.code, (f.where or "").rsplit("/hostile/", 1)[-1]) for f in findings)


def test_symlinks_out_of_the_skill_are_findings_never_read(hostile: Path) -> None:
    files = read_skill_files(hostile)
    assert [f.relpath for f in files.files] == ["references/ok.md"]
    assert _codes(files.io_findings) == [
        ("SYMLINK_OUTSIDE_SKILL", "assets"),
        ("SYMLINK_OUTSIDE_SKILL", "references/linked-dir"),
        ("SYMLINK_OUTSIDE_SKILL", "references/passwd"),
        ("SYMLINK_OUTSIDE_SKILL", "references/peer.md"),
        ("SYMLINK_OUTSIDE_SKILL", "references/zero"),
    ]
    texts = reference_texts(hostile, parse_skill(files))
    assert texts == (("references/ok.md", "# fine\n"),)


def test_nothing_outside_reaches_the_judge_prompt(hostile: Path) -> None:
    passwd = Path("/etc/passwd").read_text()
    judge = CapturingJudge()
    (ev,), _ = evaluate_path(hostile, EvalOptions(depth="standard", judges=(judge,)))
    (sent,) = judge.inputs
    everything = sent.skill_md + "".join(path + text for path, text in sent.references)
    assert SECRET not in everything and "root:" not in everything
    assert passwd.splitlines()[0] not in everything
    assert [path for path, _ in sent.references] == ["references/ok.md"]
    codes = [f.code for f in ev.findings]
    assert codes.count("SYMLINK_OUTSIDE_SKILL") == 5


def test_a_link_cannot_probe_the_host_for_existence(hostile: Path) -> None:
    (ev,), _ = evaluate_path(hostile, EvalOptions(depth="quick"))
    # /etc/hostname exists, but the link leaves the plugin: it counts as dead.
    assert os.path.exists("/etc/hostname")
    assert "DEAD_CROSS_REF" in [a.flag for a in ev.static.anti_patterns]


def _evaluate_with_deadline(skill: Path, seconds: float = 10.0):
    result: dict[str, object] = {}

    def work() -> None:
        try:
            result["value"] = evaluate_path(skill, EvalOptions(depth="quick"))
        except InputError as exc:
            result["value"] = exc

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "reading the skill blocked"
    return result["value"]


def _refused(skill: Path, why: str) -> str:
    """The one-line error a refused SKILL.md gives (never an empty skill scored)."""
    error = _evaluate_with_deadline(skill)
    assert isinstance(error, InputError), error
    line = error.one_line()
    assert "\n" not in line and "SKILL.md refused" in line and why in line, line
    return line


def test_fifo_skill_md_returns_promptly_refused(tmp_path: Path) -> None:
    skill = tmp_path / "fifo-skill"
    (skill / "references").mkdir(parents=True)
    os.mkfifo(skill / "SKILL.md")
    _refused(skill, "FIFO")


def test_a_fifo_reference_is_a_finding(tmp_path: Path) -> None:
    skill = tmp_path / "fifo-ref"
    (skill / "references").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: f\ndescription: Use when x.\n---\n# F\n")
    os.mkfifo(skill / "references" / "pipe.md")
    (ev,), _ = _evaluate_with_deadline(skill)
    refused = [f for f in ev.findings if f.code == "NOT_A_REGULAR_FILE"]
    assert [f.where.rsplit("fifo-ref/", 1)[-1] for f in refused] == ["references/pipe.md"]
    assert "FIFO" in refused[0].message


def test_dev_zero_skill_md_is_refused_not_read(tmp_path: Path) -> None:
    skill = tmp_path / "zero-skill"
    skill.mkdir()
    (skill / "SKILL.md").symlink_to("/dev/zero")
    _refused(skill, "outside")


def test_a_directory_named_skill_md_is_refused(tmp_path: Path) -> None:
    skill = tmp_path / "dir-skill"
    (skill / "SKILL.md").mkdir(parents=True)
    _refused(skill, "directory")


def test_hard_links_are_never_read_nor_judged(tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    secret = host / "secret.md"
    secret.write_text(f"---\nname: s\ndescription: Use when x.\n---\n# {SECRET}\n")
    skill = tmp_path / "linked"
    (skill / "references").mkdir(parents=True)
    os.link(secret, skill / "SKILL.md")
    assert (skill / "SKILL.md").read_text() == secret.read_text()  # the control
    _refused(skill, "hard links")
    (skill / "SKILL.md").unlink()
    (skill / "SKILL.md").write_text(SKILL)
    os.link(secret, skill / "references" / "ok.md")
    judge = CapturingJudge()
    (ev,), _ = evaluate_path(skill, EvalOptions(depth="standard", judges=(judge,)))
    assert ("HARD_LINKED_FILE", "references/ok.md") in [
        (f.code, (f.where or "").rsplit("linked/", 1)[-1]) for f in ev.findings
    ]
    assert judge.inputs and SECRET not in repr(judge.inputs)


def test_a_batch_with_a_refused_skill_md_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "skills" / "good"
    good.mkdir(parents=True)
    (good / "SKILL.md").write_text("---\nname: g\ndescription: Use when x.\n---\n# G\n")
    bad = tmp_path / "skills" / "bad"
    bad.mkdir()
    os.mkfifo(bad / "SKILL.md")
    with pytest.raises(SystemExit) as done:
        main(["plugin", "score", str(tmp_path / "skills")])
    _, err = capsys.readouterr()
    assert done.value.code == 2 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "bad/SKILL.md" in line and "FIFO" in line


def test_oversized_files_are_capped_with_findings(tmp_path: Path) -> None:
    skill = tmp_path / "big"
    refs = skill / "references"
    refs.mkdir(parents=True)
    body = "---\nname: big\ndescription: Use when testing caps.\n---\n# Big\n"
    (skill / "SKILL.md").write_text(body + "x" * (MAX_FILE_BYTES + 10))
    # One file over the per-file cap, then enough 1 MiB files to pass the per-skill cap.
    (refs / "a-huge.md").write_text("h" * (3 * MAX_FILE_BYTES))
    per_skill_files = MAX_SKILL_BYTES // MAX_FILE_BYTES
    for n in range(per_skill_files):
        (refs / f"b{n:02d}.md").write_text("r" * MAX_FILE_BYTES)
    files = read_skill_files(skill)
    assert len(files.skill_md) == MAX_FILE_BYTES
    codes = [(f.code, (f.where or "").rsplit("/big/", 1)[-1]) for f in files.io_findings]
    assert ("FILE_OVER_SIZE_CAP", "SKILL.md") in codes
    assert ("FILE_OVER_SIZE_CAP", "references/a-huge.md") in codes
    assert ("SKILL_OVER_SIZE_CAP", "references") in codes
    listed = {f.relpath: f.size for f in files.files}
    assert listed["references/a-huge.md"] == 3 * MAX_FILE_BYTES  # true size, partly read
    charged = len(files.skill_md) + sum(min(s, MAX_FILE_BYTES) for s in listed.values())
    assert charged <= MAX_SKILL_BYTES
    assert len(listed) < per_skill_files + 1
    texts = reference_texts(skill, parse_skill(files))
    assert sum(len(t) for _, t in texts) <= 60_000


def test_symlink_inside_the_skill_is_followed(tmp_path: Path) -> None:
    skill = tmp_path / "inner"
    refs = skill / "references"
    refs.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: inner\ndescription: Use when x.\n---\n# I\n")
    (refs / "real.md").write_text("# real\n")
    (refs / "alias.md").symlink_to("real.md")
    files = read_skill_files(skill)
    assert [f.relpath for f in files.files] == ["references/alias.md", "references/real.md"]
    assert files.io_findings == ()
