"""The test-support package: what the tests and the benchmarks (bench/) share: a real daemon
process, the sample / synthetic / benchmark vaults, the benchmark queries, the load run and
process measurements. Installed with the project, so both import it by name.

The dependency goes one way: tests/ and bench/ import it; it imports vaultmem and itself, never
a test module nor anything in bench/ or scripts/ (tests/test_boundaries.py checks it).
"""
