"""A 4-agent 1v1 round robin against the bare-RocketSim ceiling (`league bench tournament`).

From one run on the same cores: games/s and simulated game-seconds per wall-second of a real
tournament (rule, random and two [256, 256, 256] MLP agents, replays and ratings included), and
the time bare RocketSim needs for the same simulated time on the same number of processes.
With the community bots' folders (`--bots DIR`), the same round robin again with Necto and
Element in the MLPs' places, so their cost shows as a ratio of games per second.
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
    community_wall_seconds: float | None = None  # the same round robin with Necto and Element for the MLPs

    @property
    def community_over_plain(self) -> float | None:
        """Games per second with the community bots, over games per second without (same games)."""
        return self.wall_seconds / self.community_wall_seconds if self.community_wall_seconds else None

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
                     tick_skip: int = 8, ceiling_seconds: float = 5.0, bots: Path | None = None) -> TournamentBench:
    """`bots`: a folder holding Necto/ and Element/ from the RLBot botpack, for the community round robin."""
    cfg = load_config(sets=[f"game.game_seconds={game_seconds}"])
    with tempfile.TemporaryDirectory() as tmp:
        home, reg = _league(Path(tmp))
        try:
            wall, planned = _timed(reg, home, cfg, ["rule", "random", "mlp-0", "mlp-1"], games_per_pair, workers,
                                   game_seconds, tick_skip)
            community = None
            if bots is not None:
                from agents.community.install import add_bot

                for kind, folder in (("necto", "Necto"), ("element", "Element")):
                    add_bot(home, reg, kind, Path(bots) / folder)
                community, _ = _timed(reg, home, cfg, ["rule", "random", "necto", "element"], games_per_pair, workers,
                                      game_seconds, tick_skip)
        finally:
            reg.close()
    arenas = max(1, min(MAX_ARENAS_PER_WORKER, -(-planned // workers)))
    meter = ceiling_meter(1, workers, arenas, tick_skip, warmup=1.0)
    try:
        env_steps, seconds = meter.run(ceiling_seconds)
    finally:
        meter.close()
    return TournamentBench(planned, game_seconds, workers, wall, env_steps * tick_skip / seconds, community)


def _timed(reg: Registry, home: LeagueHome, cfg, entrants: list[str], games_per_pair: int, workers: int,
           game_seconds: float, tick_skip: int) -> tuple[float, int]:
    """(wall seconds, games) of a 1v1 round robin of `entrants`, every game played and recorded."""
    tid, _ = open_tournament(reg, cfg, 1, games_per_pair, seed=1, entrants=entrants)
    planned = reg.tournament_store.get(tid).planned_games
    start = time.perf_counter()
    played = sum(1 for _ in run_tournament(reg, home, tid, workers, game_seconds, tick_skip))
    if played != planned:
        raise RuntimeError(f"the benchmark's tournament played {played} of {planned} games")
    return time.perf_counter() - start, planned
