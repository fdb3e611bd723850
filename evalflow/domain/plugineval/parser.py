"""Parse an already-read SKILL.md into the facts the static layer scores (PLUGINEVAL.md §Parsing).

Owns decoding (BOM, UTF-16, CRLF, invalid UTF-8), the YAML frontmatter split, the fenced-code
scan and link extraction. Deliberate fixes applied here:

* fix 1 — code blocks are counted once per block (opening fence), not per fence line;
* fix 2 — headings, links and cross-references inside fenced or inline code are ignored;
  link targets lose their `#anchor` / `?query`, are URL-decoded and normalised, so
  `references/x.md#part` and nested `references/a/b.md` resolve; reference files nothing
  mentions are reported as notes; a `skills/x` cross-reference written inside a Markdown
  link target is the link's target, checked once (either reading resolving it is enough);
  a `../` link resolves from the skill directory or from the `skills/` directory above it
  (seed 004's base for cross-references);
* token_efficiency's duplicate-line ratio is over the non-empty body lines that are not
  thematic breaks (`---` between sections is markup, not repeated content);
* fix 3 — a BOM, CRLF, non-mapping or invalid frontmatter, an empty `description:` and
  binary files never raise: they are parsed, defaulted, or reported as a `Finding`.

Whether a link target exists is not decided here (that needs the file system): each link
becomes a `LinkCheck` with candidate paths, and the I/O adapter answers which exist.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote

import yaml

from evalflow.domain.patterns import compile_linear
from evalflow.domain.plugineval.model import FileEntry, Finding, SkillFiles


def strip_inline_code(line: str) -> str:
    """`line` with each inline code span replaced by one space, in linear time.

    Exactly what ``re.sub(r"(`+)(?!`)(.+?)(?<!`)\\1(?!`)", " ", line)`` gives (spans never
    cross a line), without its quadratic backtracking on a line of backtick runs: an opener is
    the suffix of a backtick run, as long as possible, whose length some later run has
    exactly; the closer is the nearest such run.
    """
    if "`" not in line:  # most prose lines: no span, and no regex call
        return line
    if "``" not in line:
        # Every run is one backtick (most lines that hold code): spans pair the backticks in
        # order, and an odd last one is left as it is.
        parts = line.split("`")
        if len(parts) % 2:
            return " ".join(parts[::2])
        return " ".join(parts[:-1:2]) + "`" + parts[-1]
    runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS_RE.finditer(line)]
    if len(runs) < 2:
        return line
    by_length: dict[int, list[int]] = {}
    for index, (_, length) in enumerate(runs):
        by_length.setdefault(length, []).append(index)
    out: list[str] = []
    kept = 0
    index = 0
    while index < len(runs) - 1:
        start, length = runs[index]
        closer = None
        for size in range(length, 0, -1):
            later = by_length.get(size)
            if later:
                at = bisect.bisect_right(later, index)
                if at < len(later):
                    closer = (size, later[at])
                    break
        if closer is None:
            index += 1
            continue
        size, closing = closer
        out.append(line[kept : start + length - size])
        out.append(" ")
        kept = runs[closing][0] + size
        index = closing + 1
    out.append(line[kept:])
    return "".join(out)


def _strip_code_spans(text: str) -> str:
    """`strip_inline_code` on each line of `text` (split on `\n`), visiting only the lines
    holding a backtick."""
    out: list[str] = []
    kept = 0
    at = text.find("`")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end < 0:
            end = len(text)
        out += (text[kept:start], strip_inline_code(text[start:end]))
        kept = end
        at = text.find("`", end)
    out.append(text[kept:])
    return "".join(out)


_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# PLUGINEVAL.md's patterns, written without their leading `\b` / `(?<![\w-])`: Python's re
# only uses its fast literal-prefix scan when a pattern starts with a literal, and these run
# over whole files. `bounded_matches` re-applies the left boundary, with identical results.
CROSS_REF_RE = re.compile(r"(?:skill|skills|sub-skills)/[a-z0-9-]+(?:/[a-z0-9-]+)*")
# \b(MUST|NEVER|ALWAYS)\b, a word at a time (`mna_count`).
MNA_WORDS = ("MUST", "NEVER", "ALWAYS")
_WORD_END_RE = re.compile(r"\b")
_BACKTICKS_RE = re.compile(r"`+")
# A fence line from its first character: `^[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})(.*)$` on the line.
_FENCE_LINE_RE = re.compile(r"[ \t]*(?:>[ \t]*)*(`{3,}|~{3,})([^\n]*)")
# A skill's text is untrusted, and on hostile lines Python's backtracking engine is
# super-linear in these two (a 16 kB line of `[a](` took 5 s, of spaces under a heading 2 s):
# they run on RE2, with `\s` spelled out as Python's Unicode whitespace (RE2's is ASCII).
_WS = r"[\t\n\v\f\r\x1c-\x1f\x85\p{Z}]"
_LINK_RE = compile_linear(
    rf"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\({_WS}*(<[^>]*>|[^){_WS[1:-1]}]+)"
    rf"(?:{_WS}+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?{_WS}*\)"
)
_REF_DEF_RE = re.compile(r"^[ ]{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.MULTILINE)
# (?<![\w/.-])(?:\./)?references/… without its optional `./`, which costs the literal-prefix
# scan (30× slower); `reference_mentions` puts the `./` and the left boundary back.
_REFERENCE_MENTION_RE = re.compile(r"references/[^\s)\]>\"'`,;]+")
# A line opening a level 1–3 ATX heading, found after its newline (a literal prefix: a fast
# scan): the marks, then the rest of the line after the spaces following them.
_HEADING_LINE_RE = re.compile(r"\n(#{1,3}) +([^\n]*)")
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TABLE_RE = re.compile(r"\|.*\|.*\|")
# A CommonMark thematic break (`---`, `***`, `___`, spaced or longer): markup between
# sections, not content a model re-reads, so never a "duplicate line" (docs/plugineval.md).
_THEMATIC_BREAK_RE = re.compile(r"(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}")
# PLUGINEVAL.md's markers, searched for in the lowered prose: "## example", "### example"
# (which holds the first), "## usage" / "## troubleshoot", "## common issue", "## faq".
# Matching ASCII letters case-insensitively finds the same without lowering the prose: of
# the characters that are not ASCII, only U+212A (KELVIN SIGN, to `k`, in no marker) and
# U+0130 (to `i` + U+0307, never followed by a letter) lower to an ASCII letter.
EXAMPLES_RE = re.compile(r"## (?:example|usage)", re.IGNORECASE | re.ASCII)
TROUBLESHOOTING_RE = re.compile(r"## (?:troubleshoot|common issue|faq)", re.IGNORECASE | re.ASCII)

LinkKind = Literal["reference", "local", "cross_skill"]


@dataclass(frozen=True, slots=True)
class LinkCheck:
    """A link or cross-reference whose target must exist.

    `candidates` are posix paths relative to the skill directory; the target resolves when
    any candidate exists. `kind` decides the consequence of a dead target: `reference` →
    ORPHAN_REFERENCE, `cross_skill` → DEAD_CROSS_REF, `local` → a note.
    """

    kind: LinkKind
    target: str
    candidates: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ParsedSkill:
    """The parsed facts of one skill; every count follows PLUGINEVAL.md's definitions."""

    location: str
    dir_name: str
    plugin: str | None
    name: str
    description: str
    # False when the skill is not invoked from its description (MISSING_TRIGGER exempt).
    description_triggered: bool
    text: str
    text_lower: str
    line_count: int
    h2_count: int
    h3_count: int
    headings: tuple[str, ...]
    code_block_count: int
    code_languages: tuple[str, ...]
    has_examples: bool
    has_troubleshooting: bool
    has_table: bool
    mna_count: int
    cross_references: tuple[str, ...]
    link_checks: tuple[LinkCheck, ...]
    # None when this reading looks for no mentions (`--compat public`).
    mentioned_references: frozenset[str] | None
    body_line_total: int
    body_line_unique: int
    reference_files: tuple[FileEntry, ...]
    asset_files: tuple[FileEntry, ...]
    findings: tuple[Finding, ...]

    @property
    def nonempty_reference_files(self) -> tuple[FileEntry, ...]:
        return tuple(f for f in self.reference_files if f.size > 0)

    @property
    def unlinked_reference_files(self) -> tuple[FileEntry, ...]:
        """Reference files no link or prose mention (outside code) points at."""
        mentioned = self.mentioned_references
        if mentioned is None:
            raise ValueError("this reading of the skill looked for no mentions")
        return tuple(
            f
            for f in self.reference_files
            if f.relpath not in mentioned
            and not any(f.relpath.startswith(m.rstrip("/") + "/") for m in mentioned)
        )


@dataclass(frozen=True, slots=True)
class SkillText:
    """What every reading of a skill shares: the decoded text, the frontmatter fields, the
    fence scan and the findings. `parse_skill` counts the rest evalflow's way, `--compat
    public` the public tool's way (`compat.public_facts`)."""

    files: SkillFiles
    name: str
    description: str
    description_triggered: bool
    text: str
    # What follows the frontmatter (the whole text without one).
    body: str
    # The lines outside fenced code, joined with `\n`; inline code still in.
    prose: str
    code_block_count: int
    code_languages: tuple[str, ...]
    headings: tuple[str, ...]
    findings: tuple[Finding, ...]


def bounded_matches(
    pattern: re.Pattern[str], text: str, also_reject: str = ""
) -> Iterator[re.Match[str]]:
    r"""Non-overlapping matches of `pattern` not preceded by a word character (nor by any
    character in `also_reject`): `findall` of `\b<pattern>` / `(?<![\w…])<pattern>`."""
    pos = 0
    while (m := pattern.search(text, pos)) is not None:
        i = m.start()
        if i and (text[i - 1].isalnum() or text[i - 1] == "_" or text[i - 1] in also_reject):
            pos = i + 1
            continue
        yield m
        pos = m.end()


def word_starts(text: str, word: str) -> Iterator[int]:
    r"""Each index where `\b<word>` matches (`word` starting with a word character): found by
    `str.find`, many times faster than a regex scan of a whole file."""
    at = text.find(word)
    while at >= 0:
        if not at or not (text[at - 1].isalnum() or text[at - 1] == "_"):
            yield at
        at = text.find(word, at + 1)


def heading_text(line: str) -> str | None:
    r"""The stripped text of a level 1–3 ATX heading (`#`–`###`, spaces, text, optional
    closing `#`s), or None: what `^#{1,3} +(.+?)#*\s*$` captures, stripped, for a line
    without a newline, in one linear pass (the pattern through RE2's Python wrapper cost
    ≈ 50 µs a heading, most of parsing a skill)."""
    if not line.startswith("#"):
        return None
    level = len(line) - len(line.lstrip("#"))
    if not 1 <= level <= 3 or line[level : level + 1] != " ":
        return None
    rest = line[level:].lstrip(" ")
    if not rest:
        # Only spaces after the marks: the text is the last space, if one is left for it.
        return "" if len(line) - level >= 2 else None
    # The text is as short as can be, one character at least: trailing whitespace and the
    # closing marks before it are not part of it.
    text = rest.rstrip().rstrip("#") or rest[0]
    return text.strip()


def reference_mentions(text: str) -> Iterator[str]:
    r"""`findall` of `(?<![\w/.-])(?:\./)?references/[^\s)\]>"'`,;]+` (group 0)."""
    pos = 0
    while (m := _REFERENCE_MENTION_RE.search(text, pos)) is not None:
        start = i = m.start()
        if i - 2 >= pos and text.startswith("./", i - 2):
            start = i - 2
        if start and (text[start - 1].isalnum() or text[start - 1] in "_/.-"):
            pos = i + 1
            continue
        yield text[start : m.end()]
        pos = m.end()


def mna_count(text: str) -> int:
    r"""`len(re.findall(r"\b(MUST|NEVER|ALWAYS)\b", text))`: matches of different words never
    overlap (each is a whole word), so the count is the sum over the words."""
    return sum(
        1
        for word in MNA_WORDS
        for at in word_starts(text, word)
        if _WORD_END_RE.match(text, at + len(word))
    )


def count_lines(text: str) -> int:
    """Lines as an editor shows them: a trailing newline does not open an extra line."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def decode_skill_md(raw: bytes, where: str) -> tuple[str, list[Finding]]:
    """Bytes → text with LF newlines; every repair is recorded, nothing raises."""
    findings: list[Finding] = []
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = raw.decode("utf-16", errors="replace")
        findings.append(
            Finding("SKILL_MD_UTF16", "note", "SKILL.md is UTF-16; decoded it as such", where)
        )
    else:
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
            findings.append(Finding("BOM_STRIPPED", "note", "removed a UTF-8 BOM", where))
        if b"\x00" in raw:
            findings.append(
                Finding(
                    "SKILL_MD_BINARY",
                    "warning",
                    "SKILL.md contains NUL bytes (binary content); scored the decodable text",
                    where,
                )
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", errors="replace")
            findings.append(
                Finding(
                    "SKILL_MD_NOT_UTF8",
                    "warning",
                    f"SKILL.md is not valid UTF-8 (first bad byte at offset {exc.start}); "
                    "undecodable bytes replaced",
                    where,
                )
            )
    text = text.removeprefix("\ufeff")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        findings.append(Finding("CRLF_NORMALISED", "note", "CRLF line endings read as LF", where))
    return text, findings


def _lenient_mapping(yaml_text: str) -> dict[str, str]:
    """Top-level `key: value` pairs, for frontmatter YAML rejects (e.g. an unquoted colon)."""
    out: dict[str, str] = {}
    for line in yaml_text.split("\n"):
        if not line or line[0] in " \t#-":
            continue
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out[key.strip()] = value.strip().strip("\"'")
    return out


def split_frontmatter(text: str, where: str) -> tuple[dict[str, Any], str, list[Finding]]:
    """YAML between a leading `---` line and the next `---` (or `...`) line; returns (mapping,
    body: the text after that line). Only the frontmatter's lines are looked at one by one."""
    findings: list[Finding] = []
    first_end = text.find("\n")
    if text[: first_end if first_end >= 0 else len(text)].rstrip() != "---":
        findings.append(
            Finding(
                "FRONTMATTER_MISSING",
                "warning",
                "no YAML frontmatter: name defaults to the directory name, description to ''",
                where,
            )
        )
        return {}, text, findings
    start = pos = first_end + 1  # 0 when the file is the `---` line alone: no closing line
    closing = None
    while pos:
        end = text.find("\n", pos)
        if text[pos : end if end >= 0 else len(text)].rstrip() in ("---", "..."):
            closing = pos
            break
        pos = end + 1
    if closing is None:
        findings.append(
            Finding(
                "FRONTMATTER_UNCLOSED",
                "warning",
                "frontmatter opened with '---' but never closed; read the file as body only",
                where,
            )
        )
        return {}, text, findings
    yaml_text = text[start : max(start, closing - 1)]
    body = text[end + 1 :] if end >= 0 else ""
    try:
        loaded = yaml.load(yaml_text, Loader=_YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (frontmatter line {mark.line + 1})" if mark is not None else ""
        findings.append(
            Finding(
                "FRONTMATTER_INVALID_YAML",
                "warning",
                f"frontmatter is not valid YAML{at}; read top-level 'key: value' lines leniently",
                where,
            )
        )
        return _lenient_mapping(yaml_text), body, findings
    if loaded is None:
        return {}, body, findings
    if not isinstance(loaded, dict):
        findings.append(
            Finding(
                "FRONTMATTER_NOT_MAPPING",
                "warning",
                f"frontmatter is a YAML {type(loaded).__name__}, not a mapping; "
                "name defaults to the directory name, description to ''",
                where,
            )
        )
        return {}, body, findings
    return {str(k): v for k, v in loaded.items()}, body, findings


def _field_text(value: Any, field: str, where: str, findings: list[Finding]) -> str:
    """Coerce a frontmatter field to text; anything odd is reported, never raised."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple) and all(
        not isinstance(v, dict | list | tuple) for v in value
    ):
        findings.append(
            Finding(
                "FRONTMATTER_FIELD_TYPE",
                "warning",
                f"'{field}' is a list; joined its items with spaces",
                where,
            )
        )
        return " ".join(str(v) for v in value)
    if isinstance(value, dict | list | tuple):
        findings.append(
            Finding(
                "FRONTMATTER_FIELD_TYPE",
                "warning",
                f"'{field}' is a YAML {type(value).__name__}; treated as empty",
                where,
            )
        )
        return ""
    findings.append(
        Finding(
            "FRONTMATTER_FIELD_TYPE",
            "note",
            f"'{field}' is a YAML {type(value).__name__}; read it as text",
            where,
        )
    )
    return str(value)


def normalise_link_target(raw: str) -> str | None:
    """A relative file target without anchor/query, URL-decoded and normalised; else None."""
    target = raw.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1].strip()
    if not target or target.startswith(("#", "/")) or _SCHEME_RE.match(target):
        return None
    target = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not target:
        return None
    return posixpath.normpath(target)


def _link_kind(norm: str) -> LinkKind:
    if norm == "references" or norm.startswith("references/"):
        return "reference"
    if norm == ".." or norm.startswith("../"):
        return "cross_skill"
    return "local"


def _scan_body(body: str, where: str) -> tuple[str, int, list[str], Finding | None]:
    """Split the body into prose (its lines outside fenced code, joined with `\n`) and count
    blocks once each (fix 1).

    Only lines holding three backticks or tildes can open or close a fence: they are found by
    `str.find` and looked at one by one, the prose between them copied in slices (a Python
    step per line was most of the scan). Offsets are into `lined`, where each line starts
    with its `\n`, so a slice of whole lines is never confused with an empty line.
    """
    lined = "\n" + body
    pieces: list[str] = []
    languages: list[str] = []
    blocks = 0
    open_fence = ""
    kept = 0  # the `\n` of the first line not yet copied to prose nor known to be code
    ticks, tildes = lined.find("```"), lined.find("~~~")
    while ticks >= 0 or tildes >= 0:
        at = ticks if tildes < 0 or 0 <= ticks < tildes else tildes
        line = lined.rfind("\n", 0, at)
        end = lined.find("\n", at)
        if end < 0:
            end = len(lined)
        if 0 <= ticks < end:
            ticks = lined.find("```", end)
        if 0 <= tildes < end:
            tildes = lined.find("~~~", end)
        m = _FENCE_LINE_RE.match(lined, line + 1)
        if m is None:
            continue
        if open_fence:
            if (
                m.group(1)[0] == open_fence[0]
                and len(m.group(1)) >= len(open_fence)
                and not m.group(2).strip()
            ):
                open_fence = ""
                kept = end
            continue
        fence, info = m.group(1), m.group(2).strip()
        # CommonMark: a backtick fence's info string cannot contain a backtick.
        if not (fence[0] == "`" and "`" in info):
            pieces.append(lined[kept:line])
            open_fence = fence
            blocks += 1
            if info:
                lang = info.split()[0].strip("{}.").lower()
                if lang:
                    languages.append(lang)
    if not open_fence:
        pieces.append(lined[kept:])
    prose = "".join(pieces)[1:]
    unclosed = None
    if open_fence:
        unclosed = Finding(
            "UNCLOSED_CODE_FENCE",
            "warning",
            f"a '{open_fence}' code fence is never closed; everything after it is code",
            where,
        )
    return prose, blocks, languages, unclosed


def _description_triggered(frontmatter: dict[str, Any]) -> bool:
    """Whether the model invokes the skill from its description: not when the frontmatter
    opts out (`disable-model-invocation: true`) or auto-loads it on a `paths:` glob."""
    if frontmatter.get("disable-model-invocation") is True:
        return False
    paths = frontmatter.get("paths")
    return not (isinstance(paths, str) and paths != "")


def read_skill_text(files: SkillFiles) -> SkillText:
    """Decode SKILL.md, split its frontmatter, scan its fences and note what is odd."""
    where = files.location
    text, findings = decode_skill_md(files.skill_md, where)
    findings[:0] = files.io_findings
    frontmatter, body, fm_findings = split_frontmatter(text, where)
    findings.extend(fm_findings)

    if "name" in frontmatter:
        name = _field_text(frontmatter["name"], "name", where, findings).strip()
        if not name:
            findings.append(
                Finding("FRONTMATTER_EMPTY_NAME", "note", "'name' is present but empty", where)
            )
    else:
        name = files.dir_name
    description = _field_text(frontmatter.get("description"), "description", where, findings)

    prose, blocks, languages, unclosed = _scan_body(body, where)
    if unclosed is not None:
        findings.append(unclosed)
    # `heading_text` of each line the pattern finds: only its last steps are left to do.
    headings: list[str] = []
    for m in _HEADING_LINE_RE.finditer("\n" + prose):
        if rest := m.group(2):
            headings.append((rest.rstrip().rstrip("#") or rest[0]).strip())
        elif m.start(2) - m.end(1) >= 2:  # only spaces: the last one is the text
            headings.append("")
    for f in files.reference_files:
        if f.binary:
            findings.append(
                Finding(
                    "REFERENCE_BINARY",
                    "warning",
                    f"{f.relpath} is binary: a model reading references/ cannot use it as text "
                    "(still counted as a reference file)",
                    where,
                )
            )
        elif f.size == 0:
            findings.append(
                Finding(
                    "REFERENCE_EMPTY",
                    "note",
                    f"{f.relpath} is empty and earns no references/ bonus",
                    where,
                )
            )
    return SkillText(
        files=files,
        name=name,
        description=description,
        description_triggered=_description_triggered(frontmatter),
        text=text,
        body=body,
        prose=prose,
        code_block_count=blocks,
        code_languages=tuple(languages),
        headings=tuple(headings),
        findings=tuple(findings),
    )


def parsed_skill(
    base: SkillText,
    *,
    line_count: int,
    h2_count: int,
    h3_count: int,
    code_languages: tuple[str, ...],
    has_examples: bool,
    has_troubleshooting: bool,
    has_table: bool,
    cross_references: tuple[str, ...],
    link_checks: tuple[LinkCheck, ...],
    mentioned_references: frozenset[str] | None,
    body_line_total: int,
    body_line_unique: int,
) -> ParsedSkill:
    """`base` with the facts a reading counts its own way."""
    files = base.files
    return ParsedSkill(
        location=files.location,
        dir_name=files.dir_name,
        plugin=files.plugin,
        name=base.name,
        description=base.description,
        description_triggered=base.description_triggered,
        text=base.text,
        text_lower=base.text.lower(),
        line_count=line_count,
        h2_count=h2_count,
        h3_count=h3_count,
        headings=base.headings,
        code_block_count=base.code_block_count,
        code_languages=code_languages,
        has_examples=has_examples,
        has_troubleshooting=has_troubleshooting,
        has_table=has_table,
        mna_count=mna_count(base.text),
        cross_references=cross_references,
        link_checks=link_checks,
        mentioned_references=mentioned_references,
        body_line_total=body_line_total,
        body_line_unique=body_line_unique,
        reference_files=files.reference_files,
        asset_files=files.asset_files,
        findings=base.findings,
    )


def parse_skill(files: SkillFiles) -> ParsedSkill:
    """Parse SKILL.md bytes plus the references/assets listing into `ParsedSkill`."""
    base = read_skill_text(files)
    lined = "\n" + base.prose
    prose = _strip_code_spans(base.prose)

    checks: dict[tuple[str, str], LinkCheck] = {}
    mentioned: set[str] = set()
    targets: list[tuple[int, int, str]] = []
    if "](" in prose:  # what every inline link holds
        targets += [(m.start(1), m.end(1), m.group(1)) for m in _LINK_RE.finditer(prose)]
    if "]:" in prose:  # what every reference definition holds
        targets += [(m.start(1), m.end(1), m.group(1)) for m in _REF_DEF_RE.finditer(prose)]
    targets.sort()
    # (start, end, key) of each checked link target, sorted: a cross-reference found inside
    # one belongs to that link's check instead of being a second finding for one target.
    link_spans: list[tuple[int, int, tuple[str, str]]] = []
    for start, end, raw in targets:
        norm = normalise_link_target(raw)
        if norm is None:
            continue
        kind = _link_kind(norm)
        if kind == "reference":
            mentioned.add(norm)
        cands: tuple[str, ...] = (norm,)
        if kind == "cross_skill":
            # Seed 004: a cross-reference must resolve from the `skills/` directory; a reader
            # of the file resolves it from the skill's own. Either reading resolving is enough.
            cands = (norm, posixpath.normpath(f"../{norm}"))
        checks.setdefault((kind, norm), LinkCheck(kind, norm, cands))
        link_spans.append((start, end, (kind, norm)))
    span_starts = [start for start, _, _ in link_spans]
    for mention in reference_mentions(prose):
        norm = normalise_link_target(mention.rstrip(".:"))
        if norm is not None:
            mentioned.add(norm)

    cross_refs: list[str] = []
    for match in bounded_matches(CROSS_REF_RE, prose, "-"):
        ref = match.group(0)
        prefix, _, rest = ref.partition("/")
        if prefix in ("skill", "skills"):
            cross_refs.append(rest)
            candidates: tuple[str, ...] = (f"../{rest}",)
        else:
            cross_refs.append(ref)
            candidates = (f"../{ref}", ref)
        at = bisect.bisect_right(span_starts, match.start()) - 1
        if at >= 0 and match.start() < link_spans[at][1]:
            key = link_spans[at][2]
            link = checks[key]
            if link.kind != "reference":
                merged = tuple(dict.fromkeys(link.candidates + candidates))
                checks[key] = LinkCheck("cross_skill", link.target, merged)
            continue
        checks.setdefault(("cross_skill", ref), LinkCheck("cross_skill", ref, candidates))

    body_counts = Counter(filter(None, map(str.strip, base.body.split("\n"))))
    # A thematic break, stripped, starts and ends with its mark: other lines (a list item's
    # `- text`) skip the regex.
    breaks = [
        s
        for s in body_counts
        if s[0] in "-*_" and s[-1] == s[0] and _THEMATIC_BREAK_RE.fullmatch(s)
    ]
    return parsed_skill(
        base,
        line_count=count_lines(base.text),
        h2_count=lined.count("\n## "),
        h3_count=lined.count("\n### "),
        code_languages=base.code_languages,
        has_examples=EXAMPLES_RE.search(prose) is not None,
        has_troubleshooting=TROUBLESHOOTING_RE.search(prose) is not None,
        has_table=_TABLE_RE.search(prose) is not None,
        cross_references=tuple(cross_refs),
        link_checks=tuple(checks.values()),
        mentioned_references=frozenset(mentioned),
        body_line_total=body_counts.total() - sum(map(body_counts.__getitem__, breaks)),
        body_line_unique=len(body_counts) - len(breaks),
    )
