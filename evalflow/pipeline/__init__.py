"""The Dagster shell: the `Definitions`, the assets, automation, the resource and the job
runner the CLI calls (docs/architecture.md)."""
