"""Run the `run` probes (executable acceptance checks) of one framework run in the gate sandbox.

Per framework run, only when some check has a `run` probe and a result is not cached:

1. a fresh clone of head, its dependency **setup** and the benchmark's **build** command, in
   the same sandbox, settings and limits as the gates (`evalflow.gates.runner`); a setup or
   build that does not pass makes every probe *not run* with that reason;
2. each probe in the run's folder of that clone (the manifest's ``root:``, else its top: the
   same command judges every framework's folder alike), one after another, offline: a
   **command** through the sandbox's
   shell (stdout and stderr captured apart, in a directory outside the clone), or an **HTTP**
   call — evalflow's stdlib driver starts the baseline's ``serve:`` command with ``$PORT``,
   waits until 127.0.0.1:PORT accepts, sends the requests and records the last answer. Server
   and client share the sandbox's own network namespace with its loopback up; the host's
   network stays unreachable;
3. the read-only guard after every command, as for the gates.

Run probes execute only under full isolation (network namespace, read-only root): without it
they are *not run* — never on the host. A run the environment stopped (the sandbox could not
start, a timeout or resource limit, an environment failure by `classify_failure`, a server
that never listened) is *not run* with its reason; only a run that completed decides passed
or failed (`evalflow.domain.acceptance`). Files are read back with ``O_NOFOLLOW``, only as
regular files inside their directory, at most `MAX_OUTPUT_BYTES`; outputs are masked with
evalflow's secret values before they are stored.

Decided results are cached beside the gate results, keyed like them (`head_key`: head, setup,
lockfiles, environment, limits, isolation, code) plus the build and serve commands and the
probe itself; a not-run result is never cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

from evalflow.domain import acceptance as rules
from evalflow.domain.acceptance import (
    AcceptanceRun,
    Observation,
    decided,
    excerpt,
    not_run,
    shell_command,
)
from evalflow.domain.gates import classify_failure, command_tools
from evalflow.domain.models import Check, GateSettings, RunProbe, ServeCommand
from evalflow.gates import runner
from evalflow.gates.runner import (
    GateCaches,
    IsolationMode,
    _attempt,
    _Context,
    _decide,
    _gate_path_env,
    _guard,
    _open,
    _Workspace,
    head_key,
    prepare_context,
)
from evalflow.gates.sandbox import (
    Execution,
    GateLimits,
    execute,
    read_tail,
    scrub,
)
from evalflow.repo.git import remove_tree, require_repo
from evalflow.repo.guard import RepoState, capture_state

MAX_OUTPUT_BYTES = 1 << 20
# Slack on top of a probe's own timeouts for the interpreter and the server to stop.
_SLACK_S = 10.0
_DRIVER = r"""
import http.client, json, os, re, signal, socket, subprocess, sys, time
spec = json.load(open(sys.argv[1], encoding="utf-8"))
out = sys.argv[2]
port = spec["port"]
saved = {}
result = {
    "ready": False, "serve_exit": None, "status": None, "headers": [], "error": None,
    "unsaved": None,
}


def fill(text):
    for name, value in saved.items():
        text = text.replace("{" + name + "}", value)
    return text


with open(os.path.join(out, "serve.log"), "wb") as log:
    server = subprocess.Popen(
        ["/bin/sh", "-c", spec["serve"]], stdin=subprocess.DEVNULL, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True, env={**os.environ, "PORT": str(port)},
    )
try:
    deadline = time.monotonic() + spec["ready_timeout_s"]
    while not result["ready"]:
        if server.poll() is not None:
            result["serve_exit"] = server.returncode
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            result["ready"] = True
        except OSError:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
    if result["ready"]:
        try:
            for number, call in enumerate(spec["calls"], start=1):
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=spec["timeout_s"])
                body = None if call["body"] is None else fill(call["body"]).encode()
                headers = {k: fill(v) for k, v in call["headers"].items()}
                conn.request(call["method"], fill(call["path"]), body=body, headers=headers)
                response = conn.getresponse()
                data = response.read(spec["max_bytes"])
                conn.close()
                text = data.decode("utf-8", "replace")
                for name, pattern in call["save"].items():
                    found = re.search(pattern, text)
                    if found is None:
                        result["unsaved"] = f"answer {number} holds no {name} (/{pattern}/)"
                        break
                    saved[name] = found.group(1)
                if result["unsaved"]:
                    break
            result["status"] = response.status
            result["headers"] = response.getheaders()
            with open(os.path.join(out, "body"), "wb") as handle:
                handle.write(data)
        except (OSError, http.client.HTTPException) as exc:
            result["error"] = f"{type(exc).__name__}: {exc}"
finally:
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except OSError:
        pass
    with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle)
"""
CODE_VERSION = hashlib.sha256(
    Path(__file__).read_bytes() + Path(rules.__file__ or "").read_bytes()
).hexdigest()[:16]


def read_regular(root: Path, relative: str) -> str | None:
    """The text of `root/relative` when it is a regular file inside `root` reached without
    a symlink on its last component (a run may plant links to the host's files), else None."""
    path = root / relative
    try:
        if not Path(os.path.realpath(path.parent)).is_relative_to(os.path.realpath(root)):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.pread(fd, MAX_OUTPUT_BYTES, 0).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _body(call_body: object) -> tuple[str | None, bool]:
    if call_body is None or isinstance(call_body, str):
        return call_body, False
    return json.dumps(call_body, ensure_ascii=False, sort_keys=True), True


def _driver_spec(probe: RunProbe, serve: ServeCommand) -> dict[str, object]:
    calls = []
    for call in probe.http or ():
        body, is_json = _body(call.body)
        headers = dict(call.headers)
        if is_json and not any(name.lower() == "content-type" for name in headers):
            headers["Content-Type"] = "application/json"
        calls.append(
            {
                "method": call.method,
                "path": call.path,
                "headers": headers,
                "body": body,
                "save": call.save,
            }
        )
    return {
        "serve": shell_command(serve.command),
        "port": serve.port,
        "ready_timeout_s": serve.ready_timeout_s,
        "timeout_s": probe.timeout_s,
        "max_bytes": MAX_OUTPUT_BYTES,
        "calls": calls,
    }


class _Probe:
    """One probe's execution in the prepared workspace."""

    def __init__(self, ctx: _Context, ws: _Workspace, check_id: str, number: int, probe: RunProbe):
        self.ctx, self.ws, self.check_id, self.number, self.probe = ctx, ws, check_id, number, probe
        self.dir = ws.sandbox / f"run-{check_id}-{number}"
        self.dir.mkdir()
        self.log = ws.sandbox / f"run-{check_id}-{number}.log"

    def _execute(self, command: str, timeout_s: float, *, loopback: bool) -> Execution:
        deps = self.ctx.deps_cache
        return execute(
            command,
            cwd=self.ws.cwd(self.ctx.root),
            env=_gate_path_env(self.ctx, self.ws),
            log=self.log,
            isolation=self.ctx.isolation,
            timeout_s=timeout_s,
            limits=self.ctx.limits,
            writable=(self.ws.clone, self.dir),
            hidden=self.ctx.hidden,
            read_only=self.ctx.exposed + ((deps,) if deps is not None and deps.is_dir() else ()),
            loopback=loopback,
        )

    def _stopped(self, run: Execution, timeout_s: float) -> str | None:
        """Why the environment stopped this execution, or None when it completed."""
        if run.timed_out:
            return f"killed at its {timeout_s:g} s timeout"
        if not run.started:
            tail = read_tail(self.log, lines=3, chars=300, secrets=self.ctx.secrets)
            return f"the sandbox could not be set up: {tail.strip() or 'no error output'}"
        if run.limit_hit is not None:
            return f"the sandbox's {run.limit_hit} limit was hit"
        return None

    def _files(self) -> dict[str, str | None]:
        cwd = self.ws.cwd(self.ctx.root)
        return {f.path: read_regular(cwd, f.path) for f in self.probe.expect.files}

    def _mask(self, text: str) -> str:
        return scrub(text, self.ctx.secrets)

    def command(self) -> AcceptanceRun:
        out, err = self.dir / "stdout", self.dir / "stderr"
        script = (
            f"exec >{shlex.quote(str(out))} 2>{shlex.quote(str(err))}\n"
            f"{shell_command(self.probe.command or '')}"
        )
        run = self._execute(script, self.probe.timeout_s, loopback=False)
        stdout = read_regular(self.dir, "stdout") or ""
        stderr = read_regular(self.dir, "stderr") or ""
        shown = "\n".join(
            f"{name}:\n{excerpt(text)}"
            for name, text in (("stdout", stdout), ("stderr", stderr))
            if text
        )
        output = self._mask(shown)
        stopped = self._stopped(run, self.probe.timeout_s)
        if stopped is not None:
            return not_run(self.check_id, self.number, self.probe, stopped, output)
        seen = Observation(
            exit_code=run.exit_code, stdout=stdout, stderr=stderr, files=self._files()
        )
        row = decided(self.check_id, self.number, self.probe, seen, output)
        if not row.passed and run.exit_code != 0:
            category, evidence = classify_failure(
                exit_code=run.exit_code,
                timed_out=False,
                limit_hit=None,
                lines=(stdout + "\n" + stderr).splitlines(),
                declared=self.ctx.declared,
                tools=command_tools(shell_command(self.probe.command or "")),
            )
            if category == "infra":
                reason = f"the environment failed, not the project: {self._mask(evidence)}"
                return not_run(self.check_id, self.number, self.probe, reason, output)
        return row.model_copy(update={"failures": self._mask(row.failures)})

    def http(self, serve: ServeCommand) -> AcceptanceRun:
        (self.dir / "spec.json").write_text(json.dumps(_driver_spec(self.probe, serve)), "utf-8")
        (self.dir / "driver.py").write_text(_DRIVER, "utf-8")
        command = shlex.join(
            [
                sys.executable,
                str(self.dir / "driver.py"),
                str(self.dir / "spec.json"),
                str(self.dir),
            ]
        )
        timeout_s = (
            serve.ready_timeout_s + self.probe.timeout_s * len(self.probe.http or ()) + _SLACK_S
        )
        run = self._execute(command, timeout_s, loopback=True)
        serve_log = self._mask(excerpt(read_regular(self.dir, "serve.log") or ""))
        stopped = self._stopped(run, timeout_s)
        try:
            result = json.loads(read_regular(self.dir, "result.json") or "")
        except ValueError:
            result = None
        if stopped is None and not isinstance(result, dict):
            stopped = f"the HTTP driver left no result (exit {run.exit_code})"
        if stopped is None and not result.get("ready"):
            exited = result.get("serve_exit")
            how = (
                f"exited {exited}" if exited is not None else f"within {serve.ready_timeout_s:g} s"
            )
            stopped = f"the serve command did not listen on 127.0.0.1:{serve.port} ({how})"
        if stopped is None and result.get("unsaved"):
            # A value a later request needs was not in an earlier answer: the behaviour under
            # test could not be reached, which says nothing about it.
            stopped = f"a request could not be prepared: {self._mask(str(result['unsaved']))}"
        if stopped is not None:
            output = f"serve output:\n{serve_log}" if serve_log else ""
            return not_run(self.check_id, self.number, self.probe, stopped, output)
        body = read_regular(self.dir, "body") or ""
        status = result.get("status")
        headers = {str(k).lower(): str(v) for k, v in result.get("headers") or []}
        shown = (
            f"HTTP {status}\n{excerpt(body)}"
            if status is not None
            else f"no response: {result.get('error')}"
        )
        seen = Observation(
            status=status if isinstance(status, int) else None,
            headers=headers,
            stdout=body,
            files=self._files(),
        )
        row = decided(self.check_id, self.number, self.probe, seen, self._mask(shown))
        return row.model_copy(update={"failures": self._mask(row.failures)})


def _key(common: dict[str, object], check_id: str, number: int, probe: RunProbe) -> str:
    material = {
        **common,
        "check": check_id,
        "number": number,
        "probe": probe.model_dump(mode="json"),
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _load(caches: GateCaches | None, key: str) -> AcceptanceRun | None:
    if caches is None:
        return None
    try:
        text = (caches.results / key[:2] / f"{key}.run.json").read_text(encoding="utf-8")
        return AcceptanceRun.model_validate_json(text)
    except (OSError, ValueError):
        return None


def _store(caches: GateCaches | None, key: str, row: AcceptanceRun) -> None:
    if caches is None or row.passed is None:
        return
    path = caches.results / key[:2] / f"{key}.run.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(row.model_dump_json(), "utf-8")
    os.replace(tmp, path)


def _blocked(
    ctx: _Context, ws: _Workspace, build_command: str | None, before: RepoState
) -> str | None:
    """Why no probe can run in this workspace (setup or build not passing), else None."""
    if not ws.ready and ws.setup is not None:
        return f"the dependency setup did not pass: {ws.setup.evidence or ws.setup.status}"
    if build_command is None:
        return None
    attempt = _attempt(ctx, ws, build_command, setup=False)
    _guard(ctx, before, "build", "run probes")
    built = _decide(ctx, "build", attempt, command_tools(build_command))
    if built.status != "pass":
        return f"the build did not pass: {built.evidence or f'exit {built.exit_code}'}"
    return None


def run_acceptance(
    repo: Path,
    head_sha: str,
    checks: Sequence[Check],
    *,
    serve: ServeCommand | None = None,
    build_command: str | None = None,
    settings: GateSettings = runner.NO_SETTINGS,
    limits: GateLimits | None = None,
    timeout_s: float | None = None,
    isolation: IsolationMode = "auto",
    sandbox_root: Path | None = None,
    hidden: Sequence[Path] = (),
    caches: GateCaches | None = None,
    rerun: bool = False,
    require_isolation: bool = False,
    root: str | None = None,
) -> list[AcceptanceRun]:
    """One row per `run` probe of `checks`, in check order (module docstring). The gate
    arguments mean what they mean for `run_gates` (`root`: the run's folder, where every
    command runs); `build_command` is the build to run after setup. Raises
    `ReadOnlyViolationError` when a command changed the repository."""
    wanted = [(c.id, n, p) for c in checks for n, p in enumerate(c.run, start=1)]
    if not wanted:
        return []
    top = require_repo(Path(repo))
    ctx, head, _ = prepare_context(
        top,
        head_sha,
        settings=settings,
        limits=limits,
        timeout_s=timeout_s,
        isolation=isolation,
        sandbox_root=sandbox_root,
        hidden=hidden,
        caches=caches,
        require_isolation=require_isolation,
        root=root,
    )
    common = {
        **head_key(ctx, head),
        "acceptance": CODE_VERSION,
        "build": build_command,
        "serve": serve.model_dump(mode="json") if serve is not None else None,
    }
    keys = {(c, n): _key(common, c, n, p) for c, n, p in wanted}
    rows = {(c, n): None if rerun else _load(caches, keys[(c, n)]) for c, n, _ in wanted}
    todo = [(c, n, p) for c, n, p in wanted if rows[(c, n)] is None]
    missing = [
        f for f in ("network", "read_only_root", "hidden_paths") if f in ctx.isolation.missing()
    ]
    if todo and missing:
        reason = (
            f"no full sandbox on this machine (missing: {', '.join(missing)}): run probes "
            "execute only inside a network namespace with a read-only host, never on the host"
        )
        rows.update({(c, n): not_run(c, n, p, reason) for c, n, p in todo})
    elif todo:
        before = capture_state(top)
        ws = _open(ctx, head)
        try:
            _guard(ctx, before, "setup", "run probes")
            blocked = _blocked(ctx, ws, build_command, before)
            for check_id, number, probe in todo:
                if blocked is not None:
                    row = not_run(check_id, number, probe, scrub(blocked, ctx.secrets))
                elif probe.http is not None and serve is None:
                    row = not_run(check_id, number, probe, "the baseline declares no serve command")
                else:
                    one = _Probe(ctx, ws, check_id, number, probe)
                    row = (
                        one.http(serve)
                        if probe.http is not None and serve is not None
                        else one.command()
                    )
                    _guard(ctx, before, f"run {check_id}#{number}", "head")
                rows[(check_id, number)] = row
                _store(caches, keys[(check_id, number)], row)
        finally:
            remove_tree(ws.sandbox)
    return [row for row in rows.values() if row is not None]
