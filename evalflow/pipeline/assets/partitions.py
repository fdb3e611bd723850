"""The `evaluations` dynamic partitions: one key per run, `<benchmark>.<framework>.<run>`."""

import dagster as dg

evaluations = dg.DynamicPartitionsDefinition(name="evaluations")
