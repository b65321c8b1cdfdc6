"""Benchmark suites: one module per paper or experiment."""
