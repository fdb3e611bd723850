"""The boundary models of spec-driven evaluation: PRD, frozen baseline, verdicts, manifests.

These are the shapes every stage exchanges (SPEC §1). They validate on construction, so a
malformed file fails where it is read, not three stages later as a wrong number.
"""

from __future__ import annotations

import math
import posixpath
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from evalflow.domain.globs import glob_problem
from evalflow.domain.patterns import UntrustedPatternError, compile_untrusted

Priority = Literal["P0", "P1", "P2"]
CheckKind = Literal["I", "T"]
TestLevel = Literal["unit", "e2e", "both"]
Status = Literal["MET", "UNMET", "UNSCORED"]
ProbeKind = Literal["impl", "test-assert"]
GateName = Literal["build", "lint", "unit", "e2e"]

STATUSES: tuple[Status, ...] = ("MET", "UNMET", "UNSCORED")
_KEY_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


# Linux's PATH_MAX and NAME_MAX: a manifest path beyond them can never be opened.
_MAX_PATH_BYTES = 4096
_MAX_NAME_BYTES = 255


def _inside_repo(value: str, key: str) -> str:
    """A relative path inside the repository, normalised (`a/b/` → `a/b`)."""
    normal = posixpath.normpath(value.strip())
    if value.startswith("/") or "\\" in value or normal in (".", "") or normal.startswith(".."):
        raise ValueError(
            f"{key} {value!r} must be a folder inside the repository: relative, without '..'"
        )
    return normal


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AcceptanceCriterion(Frozen):
    id: str
    text: str
    line: int = Field(
        ge=0, description="1-based line of the AC in the PRD (0 when not from a file)"
    )


class Story(Frozen):
    id: str
    title: str
    priority: Priority
    assumed: bool = Field(
        default=False, description="the PRD gave no label; the priority is an assumption"
    )
    acs: tuple[AcceptanceCriterion, ...]
    line: int = 0


class OutOfScopeItem(Frozen):
    text: str
    line: int = 0


class PRD(Frozen):
    title: str
    stories: tuple[Story, ...]
    out_of_scope: tuple[OutOfScopeItem, ...] = ()
    source: str = ""

    def ac_ids(self) -> list[str]:
        return [ac.id for story in self.stories for ac in story.acs]

    def story_of(self) -> dict[str, Story]:
        return {ac.id: story for story in self.stories for ac in story.acs}


class ProbeScope(Frozen):
    """Where in the syntax of the code an `impl` probe's match must lie (`within:`).

    Every key given must hold; each value is an RE2 pattern matched against a whole name.
    `function`: inside the body of a function/method so named. `call`: inside the arguments
    of a call whose callee (last name: `emit` in `self.bus.emit(...)`) matches.
    `payload_of`: inside a dict/object literal delivered to a matching call — as an argument
    or through the variable it is assigned to (`return` names a returned literal): SPEC's
    payload-field rule. `handler_of`: inside a function a matching call registers (decorator,
    callback argument, or named in its arguments): SPEC's wiring rule. Decided with
    tree-sitter by `evalflow.repo.scopes` (Python, JavaScript, TypeScript).
    `test` (the one key of a `test-assert` probe): the assertion lies in a test case whose
    name (the test function or `it`/`test` title) matches.
    """

    function: str | None = None
    call: str | None = None
    payload_of: str | None = None
    handler_of: str | None = None
    test: str | None = None

    @field_validator("function", "call", "payload_of", "handler_of", "test")
    @classmethod
    def _name_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                compile_untrusted(f"^(?:{value})$")
            except UntrustedPatternError as exc:
                raise ValueError(f"within {exc}") from exc
        return value

    @model_validator(mode="after")
    def _not_empty(self) -> ProbeScope:
        code = (self.function, self.call, self.payload_of, self.handler_of)
        if not any(code) and self.test is None:
            raise ValueError("within needs one of function, call, payload_of, handler_of, test")
        if any(code) and self.test is not None:
            raise ValueError("within: test pins a test-assert probe; it takes no other key")
        return self


class Probe(Frozen):
    """A pinned search that proves a check when it matches (used by the heuristic judge).

    `impl`: `pattern` must match a line of production code under `path_globs` — a source
    file of a programming language (`files: code`, the default), or documentation only when
    the probe says `files: docs` — and lie in the syntactic `within` scope when one is given.
    `test-assert`: `pattern` must match an assertion line of a test case that asserts.
    """

    kind: ProbeKind
    pattern: str
    path_globs: tuple[str, ...] = ("**",)
    files: Literal["code", "docs"] = "code"
    within: ProbeScope | None = None
    # Written by `baseline draft --repo` from identifiers the PRD fixes; `baseline freeze`
    # refuses it until a person accepts it (drops the flag, or drafts --accept-proposals).
    proposed: bool = False

    @model_validator(mode="after")
    def _impl_only(self) -> Probe:
        if self.kind != "impl" and self.files != "code":
            raise ValueError("files applies to impl probes only")
        tested = self.within is not None and self.within.test is not None
        if self.within is not None and tested != (self.kind == "test-assert"):
            raise ValueError(
                "within: test applies to test-assert probes; function, call, payload_of and "
                "handler_of to impl probes"
            )
        if self.files == "docs" and self.within is not None:
            raise ValueError("within needs code; a files: docs probe cannot have one")
        return self

    @field_validator("path_globs")
    @classmethod
    def _globs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        problem = next((p for p in map(glob_problem, value) if p), None)
        if problem:
            raise ValueError(f"probe {problem}")
        return value

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        # A probe is matched against lines of an untrusted repository, so it must run on the
        # linear-time engine; a pattern only a backtracking engine could run is refused here.
        try:
            compile_untrusted(value)
        except UntrustedPatternError as exc:
            raise ValueError(f"probe {exc}") from exc
        return value


# --- executable acceptance checks (`run:`) -----------------------------------------------
# Bounds on what a baseline may ask a `run` probe to send or expect: a frozen baseline is
# input, and every text here is matched against a run's output or sent to its server.
MAX_RUN_TEXT = 4_096
MAX_RUN_ITEMS = 16
MAX_RUN_TIMEOUT_S = 600.0
HttpMethod = Literal["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]
JsonScalar = str | int | float | bool | None
_HEADER_NAME = re.compile(r"^[A-Za-z0-9-]+$")
_SAVE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DOTTED = re.compile(r"^[^.\s]+(?:\.[^.\s]+)*$")


def _bounded_texts(values: tuple[str, ...], what: str, *, patterns: bool = False) -> None:
    if len(values) > MAX_RUN_ITEMS:
        raise ValueError(f"{what}: at most {MAX_RUN_ITEMS} items")
    for value in values:
        if not value or len(value) > MAX_RUN_TEXT:
            raise ValueError(f"{what}: each item needs 1 to {MAX_RUN_TEXT} characters")
        if patterns:
            try:
                compile_untrusted(value)
            except UntrustedPatternError as exc:
                raise ValueError(f"{what} {exc}") from exc


def _finite_timeout(value: float, what: str) -> float:
    if not math.isfinite(value) or not 0 < value <= MAX_RUN_TIMEOUT_S:
        raise ValueError(f"{what} must be a number of seconds in (0, {MAX_RUN_TIMEOUT_S:g}]")
    return value


def _command_text(command: str | tuple[str, ...], what: str) -> None:
    parts = (command,) if isinstance(command, str) else command
    if not parts or not all(p.strip() for p in parts) or sum(map(len, parts)) > MAX_RUN_TEXT:
        raise ValueError(f"{what} needs a non-empty command (at most {MAX_RUN_TEXT} characters)")


class HttpCall(Frozen):
    """The request a `run` probe sends to the baseline's `serve:` command (loopback only).

    `body`: text sent as is, or a JSON object/list sent as ``application/json``. `save`:
    name → RE2 pattern with one group, read from this answer's body; a later request's path,
    header values and body use it as ``{name}`` (e.g. the code a create answered with)."""

    method: HttpMethod = "GET"
    path: str
    headers: dict[str, str] = Field(default_factory=dict)
    body: str | dict[str, Any] | list[Any] | None = None
    save: dict[str, str] = Field(default_factory=dict)

    @field_validator("save")
    @classmethod
    def _captures(cls, value: dict[str, str]) -> dict[str, str]:
        for name, pattern in value.items():
            if not _SAVE_NAME.match(name):
                raise ValueError(f"save name {name!r} must be letters, digits and _")
            try:
                groups = compile_untrusted(pattern).groups  # type: ignore[attr-defined]
            except UntrustedPatternError as exc:
                raise ValueError(f"save {name} {exc}") from exc
            if groups != 1:
                raise ValueError(f"save {name}: the pattern needs exactly one (group)")
        return value

    @model_validator(mode="after")
    def _bounded(self) -> HttpCall:
        if not self.path.startswith("/") or any(c.isspace() for c in self.path):
            raise ValueError(f"http path {self.path!r} must start with '/' and hold no spaces")
        if len(self.path) > MAX_RUN_TEXT or len(self.headers) > MAX_RUN_ITEMS:
            raise ValueError("http path or headers too large")
        for name, value in self.headers.items():
            if not _HEADER_NAME.match(name) or "\n" in value or "\r" in value:
                raise ValueError(f"http header {name!r} is not a plain header line")
        if self.body is not None and len(str(self.body)) > MAX_RUN_TEXT:
            raise ValueError(f"http body larger than {MAX_RUN_TEXT} characters")
        return self


class FileExpectation(Frozen):
    """A file the command must leave in the clone (a path relative to the run's folder, its
    `root:`, else the clone's top: where the command ran)."""

    path: str
    contains: tuple[str, ...] = ()
    matches: tuple[str, ...] = Field(default=(), description="RE2 patterns")

    @model_validator(mode="after")
    def _inside(self) -> FileExpectation:
        normal = posixpath.normpath(self.path)
        if self.path.startswith("/") or normal == "." or normal.startswith(".."):
            raise ValueError(f"file {self.path!r} must be a path inside the clone")
        _bounded_texts(self.contains, f"file {self.path} contains")
        _bounded_texts(self.matches, f"file {self.path} matches", patterns=True)
        return self


class RunExpectation(Frozen):
    """What a `run` probe's execution must show; every given key must hold.

    For a command, `stdout`/`stderr` are its streams; for an HTTP call, `stdout` is the
    response body and `status`/`headers` the response's. `json` maps a dotted path (``a.b.0``)
    in the JSON of stdout/the body to the value it must equal (type included)."""

    exit_code: int | None = None
    status: int | None = Field(default=None, ge=100, le=599, description="HTTP status")
    headers: dict[str, str] = Field(default_factory=dict, description="response header ⊇ text")
    stdout: tuple[str, ...] = Field(default=(), description="substrings")
    stderr: tuple[str, ...] = Field(default=(), description="substrings")
    stdout_matches: tuple[str, ...] = Field(default=(), description="RE2 patterns")
    stderr_matches: tuple[str, ...] = Field(default=(), description="RE2 patterns")
    json_fields: dict[str, JsonScalar] = Field(default_factory=dict, alias="json")
    files: tuple[FileExpectation, ...] = ()

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _bounded(self) -> RunExpectation:
        for name in ("stdout", "stderr"):
            _bounded_texts(getattr(self, name), f"expect.{name}")
            _bounded_texts(
                getattr(self, f"{name}_matches"), f"expect.{name}_matches", patterns=True
            )
        if len(self.json_fields) > MAX_RUN_ITEMS or len(self.files) > MAX_RUN_ITEMS:
            raise ValueError(f"expect: at most {MAX_RUN_ITEMS} json fields and files")
        bad = [p for p in self.json_fields if not _DOTTED.match(p)]
        if bad:
            raise ValueError(f"expect.json path {bad[0]!r} is not a dotted path like a.b.0")
        if all(getattr(self, name) in (None, (), {}) for name in type(self).model_fields):
            raise ValueError("expect needs at least one expectation")
        return self


class RunProbe(Frozen):
    """An executable acceptance check (SPEC §5, "What counts as evidence"): a command, or an
    HTTP request to the baseline's `serve:` command, run in the gate sandbox after setup and
    build, whose observable behaviour must meet `expect`. Written once against the interface
    the PRD fixes, so every implementation is judged by the same execution."""

    kind: Literal["run"] = "run"
    command: str | tuple[str, ...] | None = Field(
        default=None, description="a shell command, or an argv list (quoted for the shell)"
    )
    http: tuple[HttpCall, ...] | None = Field(
        default=None,
        description="requests sent in order to one fresh server; `expect` reads the last answer",
    )
    expect: RunExpectation
    timeout_s: float = 30.0

    @field_validator("http", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        return [value] if isinstance(value, dict) else value

    @model_validator(mode="after")
    def _one_action(self) -> RunProbe:
        if (self.command is None) == (self.http is None):
            raise ValueError("a run probe needs exactly one of command or http")
        if self.http is not None and not 0 < len(self.http) <= MAX_RUN_ITEMS:
            raise ValueError(f"http needs 1 to {MAX_RUN_ITEMS} requests")
        if self.command is not None:
            _command_text(self.command, "run command")
            if self.expect.status is not None or self.expect.headers:
                raise ValueError("expect.status/headers apply to http run probes only")
        elif self.expect.exit_code is not None or self.expect.stderr or self.expect.stderr_matches:
            raise ValueError("expect.exit_code/stderr apply to command run probes only")
        _finite_timeout(self.timeout_s, "run timeout_s")
        return self


class ServeCommand(Frozen):
    """How an HTTP `run` probe reaches the implementation: a command that serves it on
    127.0.0.1:`port` (given to it as ``$PORT``) inside the sandbox's own network namespace."""

    command: str | tuple[str, ...]
    port: int = Field(default=8000, ge=1024, le=65535)
    ready_timeout_s: float = 20.0

    @model_validator(mode="after")
    def _bounded(self) -> ServeCommand:
        _command_text(self.command, "serve")
        _finite_timeout(self.ready_timeout_s, "serve ready_timeout_s")
        return self


class Check(Frozen):
    id: str
    kind: CheckKind
    proposition: str
    level: TestLevel | None = Field(default=None, description="T-checks only")
    outcome: bool = Field(default=False, description="T-check on a persisted/async outcome")
    external_call: bool = Field(
        default=False,
        description="the proposition is 'calls external API X': a mock/spy is the right proof",
    )
    wiring: bool = Field(default=False, description="I-check on the ingress wiring of an event")
    probes: tuple[Probe, ...] = ()
    # Kept apart from `probes` (searches matched line by line): a `run` probe is executed.
    run: tuple[RunProbe, ...] = Field(default=(), description="executable acceptance checks")

    @model_validator(mode="after")
    def _kind_fields(self) -> Check:
        if self.kind == "T" and self.level is None:
            raise ValueError(f"T-check {self.id} needs a level (unit, e2e or both)")
        if self.kind == "I" and (self.level is not None or self.outcome):
            raise ValueError(f"I-check {self.id} cannot have a test level or outcome flag")
        if self.kind == "T" and self.wiring:
            raise ValueError(f"T-check {self.id} cannot be a wiring check")
        wanted: ProbeKind = "impl" if self.kind == "I" else "test-assert"
        for probe in self.probes:
            if probe.kind != wanted:
                raise ValueError(f"{self.kind}-check {self.id} needs '{wanted}' probes")
        if self.run and self.kind == "T" and not self.outcome:
            raise ValueError(f"run probes fit I-checks and T-outcome checks, not {self.id}")
        return self


class BaselineAC(Frozen):
    id: str
    text: str
    interpretation: str = Field(default="", description="frozen reading of an ambiguous AC")
    checks: tuple[Check, ...]


class Anchor(Frozen):
    """A calibration anchor: a settled example the judges read before scoring.

    SPEC asks for clear MET, clear UNMET and borderline examples; a borderline anchor still
    carries the verdict it was settled on (`verdict`) and why (`reason`)."""

    check_id: str
    verdict: Literal["MET", "UNMET"]
    example: str
    reason: str
    # Optional with a default, so baselines frozen before it keep their sha256.
    borderline: bool = False


class TestLevelPolicy(Frozen):
    """How this benchmark decides a test's level; frozen with the checks because it changes
    T verdicts. Unset fields keep evalflow's defaults (see docs/configuration.md)."""

    __test__ = False  # not a pytest test class

    e2e_path_globs: tuple[str, ...] | None = None
    e2e_imports: tuple[str, ...] | None = None
    e2e_markers: tuple[str, ...] | None = None
    python_test_globs: tuple[str, ...] | None = None
    js_test_globs: tuple[str, ...] | None = None


class CheckedRun(Frozen):
    """A run a baseline's probes were checked against (`baseline lint --runs --record`)."""

    run: str = Field(description="run_key")
    framework: str
    head: str = Field(description="the head commit the probes were run on")


class CheckedRuns(Frozen):
    """Which runs the probes were checked against, and in which each probe's pattern matched:
    the record that lets the heuristic judge trust a probe's silence as proof of absence
    (`evalflow.domain.portability`)."""

    runs: tuple[CheckedRun, ...]
    matched: dict[str, tuple[tuple[str, ...], ...]] = Field(
        default_factory=dict,
        description="check id → per probe (in order), the run keys where it matched",
    )


class Baseline(Frozen):
    benchmark: str
    prd: str = Field(description="path of the PRD, relative to the baseline file")
    acs: tuple[BaselineAC, ...]
    anchors: tuple[Anchor, ...] = ()
    test_levels: TestLevelPolicy = TestLevelPolicy()
    build_command: str | None = Field(
        default=None, description="the benchmark's one standard build command (the build gate)"
    )
    # Frozen with the checks (hashed when set): a priority decides a story's weight, so a
    # different mapping must never be ranked beside the old one.
    priority_map: dict[str, Priority] = Field(
        default_factory=dict,
        description="PRD priority label → P0/P1/P2, over the PRD dialect's own table "
        "(spec-kit: P1→P0, P2→P1, P3–P5→P2); unknown labels stay ASSUMED",
    )

    @field_validator("priority_map")
    @classmethod
    def _labels(cls, value: dict[str, Priority]) -> dict[str, Priority]:
        bad = [label for label in value if not re.fullmatch(r"[A-Za-z0-9_-]+", label)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a priority label (letters, digits, - and _)")
        return value

    serve: ServeCommand | None = Field(
        default=None, description="serves the implementation for HTTP run probes"
    )

    @model_validator(mode="after")
    def _served(self) -> Baseline:
        if self.serve is None:
            needs = [c.id for _, c in self.checks() if any(r.http for r in c.run)]
            if needs:
                raise ValueError(f"check {needs[0]} sends HTTP requests: the baseline needs serve")
        return self

    checked_against: CheckedRuns | None = None
    # Frozen with the checks: what a confined run (`root:`) may cite changes its verdicts.
    shared_paths: tuple[str, ...] = Field(
        default=(),
        description="paths every run sees beside its root: (e.g. the PRD/spec folder)",
    )

    @field_validator("shared_paths")
    @classmethod
    def _shared_inside(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(_inside_repo(v, "shared_paths") for v in value)

    def checks(self) -> list[tuple[BaselineAC, Check]]:
        return [(ac, check) for ac in self.acs for check in ac.checks]


class Evidence(Frozen):
    path: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    quote: str | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Evidence:
        if self.end_line < self.start_line:
            raise ValueError(f"evidence {self.path}: end_line before start_line")
        return self

    def ref(self) -> str:
        if self.start_line == self.end_line:
            return f"{self.path}:{self.start_line}"
        return f"{self.path}:{self.start_line}-{self.end_line}"


class RunEvidence(Frozen):
    """Behavioural evidence (SPEC §5): a `run` probe evalflow executed in the gate sandbox,
    what it expected and an excerpt of what it observed (secrets masked)."""

    kind: Literal["run"] = "run"
    command: str
    expectation: str
    output: str

    def ref(self) -> str:
        return f"run `{self.command}` ⇒ {self.expectation}"


class Search(Frozen):
    """One search a judge really ran: the pattern, where, and how many lines matched."""

    pattern: str
    scope: str = Field(description="'diff surface', 'repository' or a glob/file list")
    hits: int = 0


class Verdict(Frozen):
    check_id: str
    run: int = Field(ge=1, description="which of the k independent runs")
    status: Status
    evidence: tuple[Evidence | RunEvidence, ...] = ()
    searches: tuple[Search, ...] = ()
    rationale: str = ""
    judge_id: str
    flags: tuple[str, ...] = Field(
        default=(), description="e.g. 'evidence-outside-diff-surface', 'evidence-invalid'"
    )
    read_blobs: tuple[tuple[str, str], ...] | None = Field(
        default=None,
        description="(path, git blob id) of each file the judge read, sorted; None where the "
        "judge does not record it (a judge without repository tools, stored labels)",
    )


class GateCommands(Frozen):
    build: str | None = None
    lint: str | None = None
    unit: str | None = None
    e2e: str | None = None


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A variable whose name holds one of these is a secret: masked in gate output, never passed
# through (`gate_env: {NAME: null}`) from evalflow's own environment.
SECRET_MARKERS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL")
# Where evalflow and the SDKs it uses read keys and cloud credentials from (the judges' API
# keys, cloud SDK credentials; a key named by EVALFLOW_OPENAI_API_KEY_ENV holds a marker):
# gate_env may not name them at all, with a value or without.
_EVALFLOW_SECRET_PREFIXES = (
    "ANTHROPIC_", "OPENAI_", "AWS_", "GOOGLE_", "GCP_", "GCLOUD_", "CLOUDSDK_",
    "AZURE_",
)  # fmt: skip


def check_gate_env(env: dict[str, str | None]) -> dict[str, str | None]:
    """`env` if every name is a variable name gates may get, else ValueError naming the first.

    The repository's code runs in the gates, so a name there reaches hostile code: evalflow's
    own keys and credentials can never be named, and no secret-looking variable can be passed
    through from evalflow's environment (a literal test value is the project's own).
    """
    for name, value in env.items():
        if not _ENV_NAME.match(name):
            raise ValueError(f"{name!r} is not an environment variable name")
        if name.upper().startswith(_EVALFLOW_SECRET_PREFIXES):
            raise ValueError(
                f"gate_env may not name {name}: evalflow reads its keys and credentials from "
                "such variables, and gates run the repository's code — remove it"
            )
        if value is None and any(marker in name.upper() for marker in SECRET_MARKERS):
            raise ValueError(
                f"gate_env may not pass {name} through from evalflow's environment (it looks "
                "like a secret) — give the gates a test value instead"
            )
    return env


class GateSettings(Frozen):
    """How gates are set up and bounded; a run manifest's keys over its benchmark's defaults
    (`_benchmark.yaml` beside the baseline). Unset (None / empty) keeps the default."""

    setup: str | tuple[str, ...] | None = Field(
        default=None,
        description="dependency setup before the gates: a command, a list, or 'auto'",
    )
    gate_env: dict[str, str | None] = Field(
        default_factory=dict,
        description="extra gate variables: NAME: value, or NAME: null to pass evalflow's own",
    )
    gate_limits: dict[str, float | int | None] = Field(
        default_factory=dict, description="GateLimits fields (timeout_s, memory_bytes, ...)"
    )
    require_isolation: bool | None = Field(
        default=None, description="refuse to run gates when a sandbox feature is missing"
    )

    @field_validator("setup")
    @classmethod
    def _commands(cls, value: str | tuple[str, ...] | None) -> str | tuple[str, ...] | None:
        commands = (value,) if isinstance(value, str) else value or ()
        if value is not None and (not commands or not all(c.strip() for c in commands)):
            raise ValueError("setup needs a non-empty command, a list of them, or 'auto'")
        return value

    @field_validator("gate_env")
    @classmethod
    def _names(cls, value: dict[str, str | None]) -> dict[str, str | None]:
        return check_gate_env(value)

    def over(self, defaults: GateSettings) -> GateSettings:
        """These settings, with every unset key taken from `defaults` (env/limits merged)."""
        return GateSettings(
            setup=self.setup if self.setup is not None else defaults.setup,
            gate_env={**defaults.gate_env, **self.gate_env},
            gate_limits={**defaults.gate_limits, **self.gate_limits},
            require_isolation=(
                self.require_isolation
                if self.require_isolation is not None
                else defaults.require_isolation
            ),
        )


class RunManifest(Frozen):
    """One framework run of a benchmark: where its code is and how to judge it.

    `repo` is an existing git repository; `source` is a plain source tree that evalflow's
    deterministic builder turns into a git repository (the bundled demo). Exactly one is set.
    Relative paths are resolved against the manifest's directory when the file is loaded.
    """

    benchmark: str
    framework: str
    run: str
    root: str | None = Field(
        default=None,
        description="the folder of the repository this run owns (one folder per framework): "
        "diff surface, evidence and tests are read only there and in the shared_paths",
    )
    baseline: str = Field(
        default="../_ac-baseline.yaml", description="the benchmark's frozen baseline file"
    )
    repo: str | None = None
    source: str | None = None
    base: str
    head: str
    spec_dir: str | None = None
    skills_dir: str | None = None
    gates: GateCommands = GateCommands()
    setup: str | tuple[str, ...] | None = None
    gate_env: dict[str, str | None] = Field(default_factory=dict)
    gate_limits: dict[str, float | int | None] = Field(default_factory=dict)
    require_isolation: bool | None = None
    author_model: str | None = None
    framework_cost_usd: float | None = Field(default=None, ge=0)
    judge: str | None = None

    @field_validator("benchmark", "framework", "run")
    @classmethod
    def _key_part(cls, value: str) -> str:
        if not _KEY_PART.match(value):
            raise ValueError(
                f"{value!r} may only hold letters, digits, '-' and '_' (it is part of a run_key)"
            )
        return value

    @field_validator("gate_env")
    @classmethod
    def _gate_env(cls, value: dict[str, str | None]) -> dict[str, str | None]:
        return check_gate_env(value)

    @field_validator("root")
    @classmethod
    def _root_inside(cls, value: str | None) -> str | None:
        return None if value is None else _inside_repo(value, "root")

    @field_validator("root", "baseline", "repo", "source", "spec_dir", "skills_dir")
    @classmethod
    def _usable_path(cls, value: str | None) -> str | None:
        """A path the file system can take: a NUL byte or an overlong name was an internal
        error (ValueError, ENAMETOOLONG) when the run first touched it, not a line here."""
        if value is None:
            return None
        if "\0" in value:
            raise ValueError("a path may not hold a NUL byte")
        longest = max(len(part.encode()) for part in value.split("/"))
        if len(value.encode()) > _MAX_PATH_BYTES or longest > _MAX_NAME_BYTES:
            raise ValueError(
                f"path of {len(value.encode())} bytes (longest name {longest}) is longer than "
                f"a file system takes ({_MAX_PATH_BYTES} per path, {_MAX_NAME_BYTES} per name)"
            )
        return value

    @model_validator(mode="after")
    def _one_location(self) -> RunManifest:
        if (self.repo is None) == (self.source is None):
            raise ValueError("set exactly one of 'repo' (a git repository) or 'source'")
        return self

    @property
    def run_key(self) -> str:
        return f"{self.benchmark}.{self.framework}.{self.run}"

    @property
    def gate_settings(self) -> GateSettings:
        """The manifest's gate keys (`setup`, `gate_env`, `gate_limits`, `require_isolation`)."""
        return GateSettings(
            setup=self.setup,
            gate_env=self.gate_env,
            gate_limits=self.gate_limits,
            require_isolation=self.require_isolation,
        )
