"""What the tests and the scripts share: a real daemon process, the sample / synthetic / benchmark
vaults, the benchmark queries, the load run and process measurements.

The dependency goes one way: tests and scripts import the harness; the harness imports vaultmem
and itself, never a test module nor anything in scripts/.
"""
