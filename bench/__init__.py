"""Benchmarks: `python -m bench` (or `make bench`) prints figures and ratios to baselines."""
