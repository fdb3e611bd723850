"""The report's gates section names every sandbox feature the machine lacked."""

from __future__ import annotations

from evalflow.domain.gates import GateResult, gates_frame
from evalflow.reports.markdown import _gates_section


def _unit(missing: tuple[str, ...]) -> GateResult:
    return GateResult(
        gate="unit",
        command="pytest -q",
        status="pass",
        exit_code=0,
        duration_s=1.0,
        network_isolated=True,
        target_read_only=True,
        isolation_missing=missing,
    )


def test_missing_isolation_is_shown() -> None:
    text = "\n".join(_gates_section(gates_frame("b.f.r", [_unit(("memory_limit", "tmpfs"))])))
    assert "Sandbox features this machine lacked: memory_limit, tmpfs" in text
    assert "--require-isolation" in text


def test_full_isolation_adds_no_line() -> None:
    text = "\n".join(_gates_section(gates_frame("b.f.r", [_unit(())])))
    assert "lacked" not in text
