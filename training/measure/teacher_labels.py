"""The teacher's labels alone (issue 59): Necto labelling real game states, states/s per path.

    python -m training.measure.teacher_labels [--bot-folder DIR] [--stage 1v1] [--arenas 64]
                                              [--steps 48] [--repeats 3] [--threads 1] [--json FILE]

Necto is added to a throwaway league home from its botpack folder (`league bot add necto`: its
weights' tensors only) and built as a distilling run builds its teacher (training.opponents.agent_spec).
Real RocketSim games are then played in this process, Necto driving every car with a share of the
cars on uniformly random controls each step (so the states vary as a student's would), and every
step's game state and episode starts are kept. Each path then labels those steps in order, all
rows of a step in one call, as training.collector's `_teacher_labels` does (agents.teaching
`teacher_labels`, the teacher's memory carried from step to step), the paths interleaved
`repeats` times on the same states, so that the ratios hold on a busy machine:

  float32 literal   the attention as the archive writes it (keys and values projected per entry):
                    the labels before issue 59, the reference
  float32           the attention refolded (agents.community.necto.Attention): the same function
  bf16              the refolded attention under bfloat16 autocast (agents.teaching.label_dtype):
                    what a distilling run uses on a CPU with bf16 units

Each path's agreement with the reference's labels: the share of states whose argmax is the same,
head by head, and the largest difference of any probability. Where the time goes is timed apart:
Necto's input building (numpy, per step) against the forward of each path.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from league.errors import LeagueError

REFERENCE = "float32 literal"
PATHS = (REFERENCE, "float32", "bf16")


@dataclass(frozen=True)
class PathFigures:
    states_per_second: list[float]  # one figure per repeat
    ratios: list[float]  # each repeat's rate over the reference's in the same repeat
    head_agreement: list[float]  # per head: the share of states whose argmax is the reference's
    max_abs_diff: float  # the largest difference of any probability from the reference's
    mean_abs_diff: float
    forward_ms_per_1k_states: float  # the network's forward alone

    @property
    def ratio(self) -> float:
        """The median of the repeats' ratios to the reference."""
        return float(np.median(self.ratios))


@dataclass(frozen=True)
class TeacherLabelsBench:
    cpu: str
    bf16_units: bool  # AMX tiles or AVX-512 BF16 (training.accel.cpu_has_bf16_units)
    team_size: int
    rows: int  # states a call (every car of every arena)
    steps: int
    repeats: int
    threads: int
    inputs_ms_per_1k_states: float  # Necto's input building alone (numpy)
    paths: dict[str, PathFigures]  # REFERENCE first


def record_games(policy, team_size: int, arenas: int, steps: int, random_share: float, seed: int):
    """`steps` steps of real games: [(GameArrays copy, episode starts)] before each step, Necto driving."""
    from agents.game_state import GameArrays
    from arena.engine.game import GameSpec
    from arena.engine.placement import Placement
    from arena.engine.vector import VecGame

    rng = np.random.default_rng(seed)
    with VecGame(GameSpec(team_size=team_size, game_state=True), workers=1, envs_per_worker=arenas,
                 placement=Placement.IN_PROCESS, seed=seed) as games:
        games.reset(seed=seed)
        rows = np.arange(games.num_agents)
        state, starts = policy.initial_state(len(rows)), games.info.episode_start.copy()
        recorded = []
        for _ in range(steps):
            g = games.game_state()
            recorded.append((GameArrays(*(np.array(a, copy=True) for a in (g.ball, g.cars, g.pads, g.teams,
                                                                             g.prev_controls))), starts.copy()))
            controls, state = policy.act_game(g, rows, state, starts)
            random = rng.random(len(rows)) < random_share
            controls[random] = rng.uniform(-1, 1, (int(random.sum()), 8)).astype(np.float32)
            controls[random, 5:] = controls[random, 5:] > 0  # jump, boost, handbrake are buttons
            games.step(np.zeros(len(rows), np.int64), controls, np.ones(len(rows), bool))
            starts = games.info.episode_start.copy()
    return recorded


def literal_copy(policy):
    """`policy` (Necto as a CommunityPolicy) with its attention as the archive writes it: the reference."""
    import torch

    from agents.community.bots import CommunityPolicy
    from agents.community.necto import NectoPolicy

    class Literal(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, q, kv, mask):
            return self.net(q, kv, mask, literal=True)

    adapter = NectoPolicy(Literal(policy.adapter.net))
    return CommunityPolicy(adapter, policy.name, policy.space)


def label_all(policy, recorded, dtype) -> tuple[np.ndarray, float]:
    """Every recorded step labelled in order, as the collector does; ([steps, R, L] labels, seconds)."""
    from agents.teaching import teacher_labels

    rows = np.arange(len(recorded[0][1]))
    state, out = policy.initial_state(len(rows)), []
    start = time.perf_counter()
    for game, starts in recorded:
        labels, state = teacher_labels(policy, game, None, rows, state, starts, policy.space, dtype)
        out.append(labels)
    return np.stack(out), time.perf_counter() - start


def split_time(policies: dict, dtypes: dict, recorded) -> tuple[float, dict[str, float]]:
    """(input building, {path: forward}) in ms per 1000 states, each timed alone over the recorded steps."""
    import torch

    adapter = next(iter(policies.values())).adapter
    rows = np.arange(len(recorded[0][1]))
    state, inputs = adapter.initial_state(len(rows)), []
    start = time.perf_counter()
    for game, starts in recorded:
        x, state = adapter.inputs(game, rows, state, starts)
        inputs.append(x)
    per_k = 1000 / (len(rows) * len(recorded))
    build = (time.perf_counter() - start) * 1000 * per_k
    forward = {}
    for name, policy in policies.items():
        dtype = dtypes[name]
        with torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext():
            policy.adapter.logits(*inputs[0])  # warm
            start = time.perf_counter()
            for x in inputs:
                policy.adapter.logits(*x)
        forward[name] = (time.perf_counter() - start) * 1000 * per_k
    return build, forward


def agreement(labels: np.ndarray, reference: np.ndarray, head_sizes) -> tuple[list[float], float, float]:
    """(argmax agreement per head, max and mean absolute difference) of labels against the reference's."""
    cuts = np.cumsum(head_sizes)[:-1]
    heads = zip(np.split(labels.reshape(-1, labels.shape[-1]), cuts, axis=1),
                np.split(reference.reshape(-1, reference.shape[-1]), cuts, axis=1))
    agree = [float((a.argmax(1) == b.argmax(1)).mean()) for a, b in heads]
    diff = np.abs(labels - reference)
    return agree, float(diff.max()), float(diff.mean())


def necto_teacher(home_root: Path, bot_folder: Path):
    """Necto as a distilling run builds its teacher: added to the league home at `home_root`, then its spec's policy."""
    from agents.community.install import add_bot
    from league.home import LeagueHome
    from league.registry import Registry
    from training.opponents import agent_spec

    home = LeagueHome(home_root)
    home.create_dirs()
    registry = Registry.create(home.db_path)
    try:
        add_bot(home, registry, "necto", bot_folder)
        return agent_spec(registry, "necto", home.root).policy()
    finally:
        registry.close()


def bench_teacher_labels(bot_folder: Path, team_size: int = 1, arenas: int = 64, steps: int = 48, repeats: int = 3,
                         threads: int = 1, random_share: float = 0.3, seed: int = 0) -> TeacherLabelsBench:
    """Each path's states/s, its ratio to the reference in each repeat, and its labels' agreement (module docstring)."""
    import torch

    from agents.community.necto import HEAD_SIZES
    from agents.teaching import label_dtype
    from training.accel import cpu_has_bf16_units
    from training.measure.gpu_check import cpu_model

    torch.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as tmp:
        teacher = necto_teacher(Path(tmp), bot_folder)
    recorded = record_games(teacher, team_size, arenas, steps, random_share, seed)
    policies = {REFERENCE: literal_copy(teacher), "float32": teacher, "bf16": teacher}
    # bf16 is measured whatever the CPU (label_dtype(..., True)); a run only takes it where there are bf16 units.
    dtypes = {REFERENCE: None, "float32": None, "bf16": label_dtype(teacher, True)}
    rates: dict[str, list[float]] = {name: [] for name in PATHS}
    labels: dict[str, np.ndarray] = {}
    states = len(recorded) * len(recorded[0][1])
    label_all(teacher, recorded[:4], None)  # warm up
    for _ in range(repeats):
        for name in PATHS:
            labels[name], seconds = label_all(policies[name], recorded, dtypes[name])
            rates[name].append(states / seconds)
    build, forward = split_time(policies, dtypes, recorded)
    paths = {}
    for name in PATHS:
        agree, worst, mean = agreement(labels[name], labels[REFERENCE], HEAD_SIZES)
        ratios = [r / ref for r, ref in zip(rates[name], rates[REFERENCE])]
        paths[name] = PathFigures(rates[name], ratios, agree, worst, mean, forward[name])
    return TeacherLabelsBench(cpu_model(), cpu_has_bf16_units(), team_size, len(recorded[0][1]), len(recorded),
                              repeats, threads, build, paths)


def default_bot_folder() -> Path:
    """LEAGUE_BOTS_DIR/Necto, else the repository's ../shared/bots/Necto (where the tests find the bots)."""
    configured = os.environ.get("LEAGUE_BOTS_DIR")
    root = Path(configured) if configured else Path(__file__).resolve().parents[3] / "shared" / "bots"
    return root / "Necto"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot-folder", type=Path, default=None, help="Necto's botpack folder")
    parser.add_argument("--stage", default="1v1", choices=("1v1", "2v2", "3v3"))
    parser.add_argument("--arenas", type=int, default=64, help="arenas; every car's state is labelled each step")
    parser.add_argument("--steps", type=int, default=48)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a rollout worker's: 1)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        report = bench_teacher_labels(args.bot_folder or default_bot_folder(), int(args.stage[0]), args.arenas,
                                      args.steps, args.repeats, args.threads)
    except LeagueError as exc:
        raise SystemExit(f"Error: {exc}") from None
    print(f"{report.cpu} (bf16 units: {'yes' if report.bf16_units else 'no'}), {report.threads} torch thread(s); "
          f"{args.stage}, {report.rows} states a call, {report.steps} steps, {report.repeats} repeats interleaved")
    print(f"  input building (numpy): {report.inputs_ms_per_1k_states:.2f} ms per 1000 states")
    for name, p in report.paths.items():
        rates = ", ".join(f"{r:,.0f}" for r in p.states_per_second)
        agree = " ".join(f"{a:.2%}" for a in p.head_agreement)
        print(f"  {name:<16} {rates} states/s  x{p.ratio:.2f} (each: {', '.join(f'{r:.2f}' for r in p.ratios)})  "
              f"forward {p.forward_ms_per_1k_states:.2f} ms/1000  argmax agreement per head {agree}  "
              f"max |dp| {p.max_abs_diff:.1e} (mean {p.mean_abs_diff:.1e})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(asdict(report), f, indent=2)


if __name__ == "__main__":
    main()
