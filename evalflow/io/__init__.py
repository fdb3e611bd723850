"""I/O adapters around the functional core: run inputs, the run registry, the ledger,
operator settings, and the file-system side of calibration, side metrics, PluginEval,
River Review and suites (docs/architecture.md)."""
