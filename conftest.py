"""Pytest configuration shared by the doctests and the test suite."""

collect_ignore = ["snlmarkov/__main__.py", "benchmarks", "notebooks"]
