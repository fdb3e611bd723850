"""Engineering gates G: dependency setup, then build, lint, unit and e2e in a sandboxed clone.

`run_gates` is the entry point; the result model and the rules that decide a gate (failure
categories, setup presets, base comparability) live in `evalflow.domain.gates` (pure), the
sandbox (environment, namespaces, limits, output) in `evalflow.gates.sandbox`.
"""

from __future__ import annotations

from evalflow.gates.runner import (
    DEFAULT_RERUN_ON_BASE,
    GateCaches,
    gate_commands,
    gate_limits,
    resolve_setup,
    run_gates,
)
from evalflow.gates.sandbox import GateLimits, Isolation, probe_isolation

__all__ = [
    "DEFAULT_RERUN_ON_BASE",
    "GateCaches",
    "GateLimits",
    "Isolation",
    "gate_commands",
    "gate_limits",
    "probe_isolation",
    "resolve_setup",
    "run_gates",
]
