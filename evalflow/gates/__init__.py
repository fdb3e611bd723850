"""Engineering gates G: build, lint, unit and e2e run in a sandboxed throw-away clone.

`run_gates` is the entry point; the result model and the rules that decide a gate live in
`evalflow.domain.gates` (pure), the sandbox (environment, namespaces, limits, output) in
`evalflow.gates.sandbox`.
"""

from __future__ import annotations

from evalflow.gates.runner import DEFAULT_RERUN_ON_BASE, DEFAULT_TIMEOUT_S, gate_commands, run_gates
from evalflow.gates.sandbox import GateLimits, Isolation, probe_isolation

__all__ = [
    "DEFAULT_RERUN_ON_BASE",
    "DEFAULT_TIMEOUT_S",
    "GateLimits",
    "Isolation",
    "gate_commands",
    "probe_isolation",
    "run_gates",
]
