"""Measurement code: the benchmarks (`league bench ...`, the learning benchmark) and `league diagnose`.

Each module measures and returns a typed report (dataclasses with named fields; derived ratios
are properties); the command (league.cli.bench, league.cli.diagnose) formats it, so the labels
and JSON keys a person reads live there, never here. Only league.cli imports this package (an
import-linter contract in pyproject.toml), plus `training/bench_learning.py`, the documented
`python -m training.bench_learning` entry point.

  env.py         game throughput: bare RocketSim, RLGym's standard env, this runner (`league bench env`)
  tournament.py  a 4-agent round robin against bare RocketSim (`league bench tournament`)
  train.py       end-to-end training throughput and its time split (`league bench train`)
  learning.py    train for a budget, then play the result against baselines (the learning benchmark)
  diagnose.py    `league diagnose`: the figures to take before and after an optimisation
  system.py      what diagnose reads from the machine: GPU status, a CPU/memory/GPU sampler
"""
