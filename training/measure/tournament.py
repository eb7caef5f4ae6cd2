"""A 4-agent 1v1 round robin against the bare-RocketSim ceiling (`league bench tournament`).

From one run on the same cores: games/s and simulated game-seconds per wall-second of a real
tournament (rule, random and two [256, 256, 256] MLP agents, replays and ratings included), and
the time bare RocketSim needs for the same simulated time on the same number of processes.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from agents.checkpoint import save_checkpoint
from agents.networks import build_network
from arena.tournament import MAX_ARENAS_PER_WORKER, open_tournament, run_tournament
from league.config import PolicyConfig, load_config
from league.game_values import TICKS_PER_SECOND
from league.home import LeagueHome
from league.registry import Registry
from training.measure.env import ceiling_meter


@dataclass(frozen=True)
class TournamentBench:
    games: int
    game_seconds: float
    workers: int
    wall_seconds: float
    ceiling_ticks_per_second: float  # bare RocketSim on the same number of processes

    @property
    def games_per_second(self) -> float:
        return self.games / self.wall_seconds

    @property
    def sim_seconds(self) -> float:
        return self.games * self.game_seconds

    @property
    def sim_seconds_per_wall_second(self) -> float:
        return self.sim_seconds / self.wall_seconds

    @property
    def bare_physics_seconds(self) -> float:
        """What bare RocketSim needs for the same simulated time."""
        return self.sim_seconds * TICKS_PER_SECOND / self.ceiling_ticks_per_second

    @property
    def times_bare_physics(self) -> float:
        return self.wall_seconds / self.bare_physics_seconds


def _league(root: Path) -> tuple[LeagueHome, Registry]:
    home = LeagueHome(root)
    home.create_dirs()
    reg = Registry.create(home.db_path)
    for k in range(2):
        torch.manual_seed(k)
        net = build_network(PolicyConfig(actor_sizes=[256, 256, 256], critic_sizes=[256, 256, 256]))
        rel = Path("checkpoints") / f"mlp-{k}.safetensors"
        sha = save_checkpoint(root / rel, net)
        reg.agent_store.add(f"mlp-{k}", "mlp", 1, checkpoint_path=str(rel), checkpoint_sha256=sha)
    return home, reg


def bench_tournament(games_per_pair: int = 2, game_seconds: float = 60.0, workers: int = 2,
                     tick_skip: int = 8, ceiling_seconds: float = 5.0) -> TournamentBench:
    cfg = load_config(sets=[f"game.game_seconds={game_seconds}"])
    with tempfile.TemporaryDirectory() as tmp:
        home, reg = _league(Path(tmp))
        entrants = ["rule", "random", "mlp-0", "mlp-1"]
        tid, _ = open_tournament(reg, cfg, 1, games_per_pair, seed=1, entrants=entrants)
        planned = reg.tournament_store.get(tid).planned_games
        start = time.perf_counter()
        played = sum(1 for _ in run_tournament(reg, home, tid, workers, game_seconds, tick_skip))
        wall = time.perf_counter() - start
        reg.close()
    assert played == planned
    arenas = max(1, min(MAX_ARENAS_PER_WORKER, -(-planned // workers)))
    meter = ceiling_meter(1, workers, arenas, tick_skip, warmup=1.0)
    try:
        env_steps, seconds = meter.run(ceiling_seconds)
    finally:
        meter.close()
    return TournamentBench(planned, game_seconds, workers, wall, env_steps * tick_skip / seconds)
