"""Types shared by every PluginEval layer: the read-in skill files, findings, dimension names.

`SkillFiles` is what the I/O adapter hands the domain: raw SKILL.md bytes plus a listing
of `references/` and `assets/`. Nothing here touches the file system.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DIMENSIONS: tuple[str, ...] = (
    "triggering_accuracy",
    "orchestration_fitness",
    "output_quality",
    "scope_calibration",
    "progressive_disclosure",
    "token_efficiency",
    "robustness",
    "structural_completeness",
    "code_template_quality",
    "ecosystem_coherence",
)

DEPTHS: tuple[str, ...] = ("quick", "standard", "deep")
# `--compat public`: the static layer by the public PluginEval tool's rules (compat.py).
COMPAT_MODES: tuple[str, ...] = ("public",)

Severity = Literal["warning", "note"]


@dataclass(frozen=True, slots=True)
class Finding:
    """Something about the input worth telling the author that is not an anti-pattern.

    Findings never change a score; they explain why a field was defaulted or a file ignored,
    so nothing is ever silently zeroed (PLUGINEVAL fix 3).
    """

    code: str
    severity: Severity
    message: str
    where: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "where": self.where,
        }


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file under the skill directory: posix path relative to the skill dir."""

    relpath: str
    size: int
    binary: bool


@dataclass(frozen=True, slots=True)
class SkillFiles:
    """Everything read from disk for one skill, before parsing.

    `files` lists `references/` and `assets/` recursively (hidden files skipped), sorted.
    `location` is the display path used in findings and reports; `io_findings` are problems
    met while reading (e.g. an unreadable plugin manifest).
    """

    dir_name: str
    skill_md: bytes
    files: tuple[FileEntry, ...] = ()
    location: str = "SKILL.md"
    plugin: str | None = None
    io_findings: tuple[Finding, ...] = ()

    @property
    def reference_files(self) -> tuple[FileEntry, ...]:
        return tuple(f for f in self.files if f.relpath.startswith("references/"))

    @property
    def asset_files(self) -> tuple[FileEntry, ...]:
        return tuple(f for f in self.files if f.relpath.startswith("assets/"))
