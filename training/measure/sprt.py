"""Calibrate the SPRT of league.sprt by simulation: are its error rates what alpha and beta promise,
and how many pairs does a decision take?

    python -m training.measure.sprt --runs 2000 [--elo0 0 --elo1 30 --alpha 0.05 --beta 0.05]
                                    [--model normalized] [--draw-ratio 0.2] [--correlation 0] [--seed 0]

Simulates `--runs` SPRTs with true Elo elo0, midway and elo1 (pairs drawn from
`league.sprt.pentanomial_distribution`, the LLR checked after every pair) and prints, per true
Elo, how often each hypothesis was accepted and the mean / median pairs to a decision; the H1
rate at elo0 is the observed alpha, the H0 rate at elo1 the observed beta (each with its
binomial standard error).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from league.sprt import Calibration, SimulatedRuns, SprtParams, calibrate


def format_calibration(cal: Calibration, seconds: float | None = None) -> str:
    """The calibration as a table a person reads."""
    p = cal.params
    lower, upper = p.bounds
    lines = [
        f"SPRT calibration: {p.model} Elo, elo0={p.elo0:g}, elo1={p.elo1:g}, alpha={p.alpha:g}, beta={p.beta:g}, "
        f"bounds ({lower:.3f}, {upper:.3f}); draw ratio {cal.draw_ratio:g}, pair correlation {cal.correlation:g}; "
        f"{cal.at_elo0.runs} runs per row" + (f"; {seconds:.1f} s" if seconds is not None else ""),
        f"{'true elo':>10} {'H1':>7} {'H0':>7} {'undecided':>9} {'mean pairs':>11} {'median':>7} {'p95':>7} {'max':>7}",
    ]
    mid = (p.elo0 + p.elo1) / 2.0

    def row(elo: float, runs: SimulatedRuns) -> str:
        p95 = float(np.percentile(runs.pairs, 95))
        return (f"{elo:>10g} {runs.rate('H1'):>7.3f} {runs.rate('H0'):>7.3f} {runs.rate(None):>9.3f} "
                f"{runs.mean_pairs:>11.1f} {runs.median_pairs:>7.0f} {p95:>7.0f} {max(runs.pairs):>7d}")

    lines += [row(p.elo0, cal.at_elo0), row(mid, cal.midway), row(p.elo1, cal.at_elo1)]
    n = cal.at_elo0.runs
    se_a = math.sqrt(p.alpha * (1 - p.alpha) / n)
    se_b = math.sqrt(p.beta * (1 - p.beta) / n)
    lines.append(f"observed alpha (H1 at elo0) {cal.false_positive_rate:.4f} vs {p.alpha:g} (binomial se {se_a:.4f}); "
                 f"observed beta (H0 at elo1) {cal.false_negative_rate:.4f} vs {p.beta:g} (se {se_b:.4f})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.measure.sprt", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated SPRTs per true Elo")
    parser.add_argument("--elo0", type=float, default=SprtParams.elo0)
    parser.add_argument("--elo1", type=float, default=SprtParams.elo1)
    parser.add_argument("--alpha", type=float, default=SprtParams.alpha)
    parser.add_argument("--beta", type=float, default=SprtParams.beta)
    parser.add_argument("--model", choices=("normalized", "logistic"), default=SprtParams.model)
    parser.add_argument("--draw-ratio", type=float, default=0.2, help="probability that a game is drawn")
    parser.add_argument("--correlation", type=float, default=0.0,
                        help="probability that a pair's mirrored game repeats the first game's result")
    parser.add_argument("--max-pairs", type=int, default=100_000, help="a run still undecided here counts as undecided")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    params = SprtParams(args.elo0, args.elo1, args.alpha, args.beta, args.model)
    start = time.perf_counter()
    cal = calibrate(params, args.runs, np.random.default_rng(args.seed), draw_ratio=args.draw_ratio,
                    correlation=args.correlation, max_pairs=args.max_pairs)
    print(format_calibration(cal, time.perf_counter() - start))


if __name__ == "__main__":
    main()
