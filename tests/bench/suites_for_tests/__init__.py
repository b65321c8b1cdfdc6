"""Benchmark suites used by the runner's fault tests (importable by the Dask workers)."""
