"""Failures keep their fix: the outermost evalflow error of a failed step, bad environment
values named with what/where/fix, and machine failures (full disk, unwritable or missing
directories) exit 2 with the fix, never 3 "internal error" and never blamed on the project."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
import yaml

from evalflow.cli import main
from evalflow.errors import InputError, InternalError
from evalflow.io import settings
from evalflow.judges.anthropic_judge import ClaudeSettings
from evalflow.pipeline import orchestrate

ROOT = Path(__file__).resolve().parents[2]
EVALFLOW = [sys.executable, "-c", "import sys; from evalflow.cli import main; main(sys.argv[1:])"]
PYDANTIC_FOOTER = "errors.pydantic.dev"


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def run_subprocess(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EVALFLOW, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
        timeout=120,
        check=False,
    )


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith(("error:", "internal error:"))]
    assert len(lines) == 1, err
    return lines[0]


# --- the outermost evalflow error of a failed Dagster step ---------------------------------


def _info(cls_name: str, message: str, cause: SimpleNamespace | None = None) -> SimpleNamespace:
    return SimpleNamespace(cls_name=cls_name, message=message, cause=cause)


def _result(error: SimpleNamespace) -> SimpleNamespace:
    failure = SimpleNamespace(
        is_step_failure=True,
        step_key="run_manifest",
        step_failure_data=SimpleNamespace(error=error),
    )
    return SimpleNamespace(all_events=[SimpleNamespace(is_step_failure=False), failure])


def test_the_outermost_input_error_is_reported_not_its_cause() -> None:
    inner = _info("InputError", "evalflow.errors.InputError: /r: git rev-parse failed: exit 1\n")
    outer = _info(
        "InputError",
        "evalflow.errors.InputError: /r: unknown commit 'xyz' — check the manifest's base\n",
        inner,
    )
    wrapped = _info("DagsterExecutionStepExecutionError", "Error occurred while executing", outer)
    message, fixable = orchestrate._failure_message(_result(wrapped))
    assert message == "run_manifest: /r: unknown commit 'xyz' — check the manifest's base"
    assert fixable


def test_an_input_error_from_a_validation_error_keeps_its_own_line() -> None:
    footer = _info("ValidationError", f"1 validation error\n  For further information visit "
                   f"https://{PYDANTIC_FOOTER}/2/v/greater_than_equal\n")  # fmt: skip
    outer = _info("InputError", "evalflow.errors.InputError: invalid setting — fix it\n", footer)
    message, fixable = orchestrate._failure_message(_result(outer))
    assert message == "run_manifest: invalid setting — fix it" and fixable


def test_a_full_disk_in_a_step_is_the_machine_with_its_fix() -> None:
    full = _info("OSError", "OSError: [Errno 28] No space left on device: '/wh/x/part.parquet'\n")
    message, fixable = orchestrate._failure_message(_result(_info("Dagster", "step", full)))
    assert message.startswith("run_manifest: /wh/x/part.parquet: No space left on device — free")
    assert fixable


def test_an_interrupted_step_is_not_called_a_bug() -> None:
    stop = _info("DagsterExecutionInterruptedError", "dagster._core.errors.Interrupted\n")
    message, fixable = orchestrate._failure_message(_result(_info("Dagster", "step", stop)))
    assert message == "run_manifest: interrupted by a signal before it finished" and fixable


def test_an_unexplained_failure_is_internal_and_exits_3() -> None:
    bug = _info("KeyError", "KeyError: 'final'\n")
    message, fixable = orchestrate._failure_message(_result(_info("Dagster", "step", bug)))
    assert message == "run_manifest: KeyError: 'final'" and not fixable
    outcomes = [
        orchestrate.Outcome("a", False, 1.0, "x: bad input — fix"),
        orchestrate.Outcome("b", False, 1.0, message, internal=True),
        orchestrate.Outcome("c", True, 1.0),
    ]
    error = orchestrate.failures_error(outcomes)
    assert isinstance(error, InternalError) and error.exit_code == 3
    assert "2 of 3 run(s) failed; first: b: run_manifest: KeyError" in error.one_line()
    error = orchestrate.failures_error(outcomes[:1] + outcomes[2:])
    assert isinstance(error, InputError) and "first: a: x: bad input — fix" in error.one_line()
    assert "fix that input" not in error.one_line()
    assert orchestrate.failures_error(outcomes[2:]) is None


def test_an_unknown_base_names_the_commit_and_the_fix(
    mini: Path, warehouse_dir: Path, capsys
) -> None:
    manifest = yaml.safe_load((mini / "runs" / "good.yaml").read_text())
    manifest.update({"run": "r2", "base": "xyz"})
    (mini / "runs" / "badbase.yaml").write_text(yaml.safe_dump(manifest))
    code, _, err = run_cli(capsys, "score", str(mini / "runs" / "badbase.yaml"))
    line = one_error_line(err)
    assert code == 2
    assert "unknown commit 'xyz'" in line and "check the manifest's base/head" in line
    assert "git rev-parse failed" not in line


# --- malformed environment values -----------------------------------------------------------

BAD_CLAUDE_ENV = {
    "EVALFLOW_CLAUDE_MAX_TOKENS": "0",
    "EVALFLOW_CLAUDE_CONCURRENCY": "0",
    "EVALFLOW_CLAUDE_MAX_TURNS": "0",
    "EVALFLOW_CLAUDE_TIMEOUT": "0",
    "EVALFLOW_MAX_COST_USD": "-1",
    "EVALFLOW_CLAUDE_BATCH_POLL_S": "0",
    "EVALFLOW_CLAUDE_BREAKER_FAILURES": "0",
    "EVALFLOW_CLAUDE_BREAKER_SECONDS": "0",
    "EVALFLOW_CLAUDE_EFFORT": "bogus",
}


@pytest.mark.parametrize(("name", "value"), sorted(BAD_CLAUDE_ENV.items()))
def test_a_malformed_claude_setting_names_its_variable(name: str, value: str, monkeypatch) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(InputError) as error:
        ClaudeSettings.from_env()
    assert error.value.where == f"{name}={value}"
    assert error.value.fix and PYDANTIC_FOOTER not in error.value.one_line()


def test_a_malformed_setting_reaches_the_cli_as_its_own_line(
    mini: Path, warehouse_dir: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-never-used")
    monkeypatch.setenv("EVALFLOW_CLAUDE_MAX_TOKENS", "0")
    code, _, err = run_cli(
        capsys, "score", str(mini / "runs" / "good.yaml"), "--judge", "anthropic"
    )
    line = one_error_line(err)
    assert code == 2
    assert "EVALFLOW_CLAUDE_MAX_TOKENS=0" in line and "max_tokens" in line
    assert PYDANTIC_FOOTER not in err


def test_a_non_integer_source_date_epoch_is_input_error(tmp_path: Path) -> None:
    # In a fresh interpreter: numpy reads SOURCE_DATE_EPOCH when scipy is first imported.
    done = run_subprocess(
        "query", "SELECT 1", env={"SOURCE_DATE_EPOCH": "abc", "EVALFLOW_WAREHOUSE": str(tmp_path)}
    )
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr)
    assert line.startswith("error: SOURCE_DATE_EPOCH=abc: ") and "unset it" in line


# --- the machine: files where directories belong, unwritable or full disks --------------------


def test_a_file_as_warehouse_exits_2(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    done = run_subprocess(
        "materialize", "--warehouse", str(tmp_path / "file"), env={"DAGSTER_HOME": ""}
    )
    assert done.returncode == 2, done.stderr
    assert "not a directory" in one_error_line(done.stderr)


def test_a_missing_dagster_home_exits_2(mini: Path, tmp_path: Path) -> None:
    home = tmp_path / "missing"
    done = run_subprocess(
        "register",
        str(mini / "runs" / "good.yaml"),
        "--warehouse",
        str(tmp_path / "wh"),
        env={"DAGSTER_HOME": str(home)},
    )
    assert done.returncode == 2, done.stderr
    line = one_error_line(done.stderr)
    assert f"DAGSTER_HOME={home}" in line and f"mkdir -p {home}" in line


def test_an_unwritable_dagster_home_exits_2(
    mini: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    # Tests may run as root, for whom no mode bit forbids a write: the check is what is tested.
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    real_access = os.access
    monkeypatch.setattr(
        settings.os, "access", lambda p, m: False if Path(p) == tmp_path else real_access(p, m)
    )
    code, _, err = run_cli(
        capsys, "register", str(mini / "runs" / "good.yaml"), "--warehouse", str(tmp_path / "wh")
    )
    assert code == 2
    line = one_error_line(err)
    assert f"{tmp_path}: the Dagster home is not writable" in line and "chmod u+w" in line


def test_an_os_error_outside_a_step_keeps_the_fix(
    mini: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    def full(*_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "dagster.yaml"))

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path))
    monkeypatch.setattr(Path, "write_text", full)
    code, _, err = run_cli(
        capsys, "register", str(mini / "runs" / "good.yaml"), "--warehouse", str(tmp_path / "wh")
    )
    assert code == 2
    line = one_error_line(err)
    assert "No space left on device" in line and "free disk space" in line


def test_a_full_disk_during_a_run_exits_2_with_the_fix(
    mini: Path, warehouse_dir: Path, capsys, monkeypatch
) -> None:
    def full(_table, where, *_args, **_kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(getattr(where, "path", where)))

    monkeypatch.setattr(pq, "write_table", full)
    code, _, err = run_cli(capsys, "score", str(mini / "runs" / "good.yaml"))
    line = one_error_line(err)
    assert code == 2, err
    assert "No space left on device" in line and "free disk space" in line
    assert "internal error" not in err
