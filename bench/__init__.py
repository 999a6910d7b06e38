"""The benchmarks and the retrieval evaluation: `python -m bench.<name>` from the repository
root, most through `scripts/bench`, `scripts/eval` and `scripts/stress load|scale`. Never
shipped; figures in docs/benchmarks.md."""
