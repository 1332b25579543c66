"""Benchmarks. Each module runs with `python -m bench.<name>` and writes
`bench/results/<name>.json` and `.md`. `python -m bench` runs them all."""
