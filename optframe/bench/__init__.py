"""Benchmark suites and the serial runner behind ``optframe bench``."""
