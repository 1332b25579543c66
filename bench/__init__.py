"""Benchmarks. Each module runs with `python -m bench.<name>` and writes
`bench/results/<name>.json` and `.md`. `python -m bench` (`make bench`) runs them all and
writes `bench/results/summary.json` and `.md`; docs/benchmarks.md explains the method."""
