"""PluginEval (SPEC §2): the three-layer quality score of a Claude Code skill or plugin.

Pure functions over already-read content; reading files lives in `evalflow.io.plugineval`.
Modules: `model` (shared types), `parser`, `static`, `antipatterns`, `composite`,
`judge_layer`, `montecarlo`, `router`, `elo`, `corpus`, `evaluate` (one skill end to end)
and `report` (JSON / Markdown rendering). This package deliberately imports nothing heavy
at import time so the `quick` path stays fast.
"""
