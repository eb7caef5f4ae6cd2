"""The Ray backend of tournaments: chunks of games as Ray tasks on a cluster.

Each task loads the agents from checkpoints it can read (the league home must be on a path
the cluster's nodes share), plays its games on the in-process runner, and returns the
outcomes with their replays encoded; the driver alone writes replays and the database. Every
game replays exactly from its seed, so the results equal the local backend's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from arena.game import GameSpec
from arena.tournament_play import GameOutcome, GamePlayer
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Agent
from league.schedule import ScheduledGame

GAMES_PER_TASK = 16  # small enough that results stream back while the rest play


def _play(games: list[ScheduledGame], agents: dict[str, Agent], spec: GameSpec, home_root: str,
          replay_dir: str, meta: dict) -> list[GameOutcome]:
    import torch

    from agents.loading import load_policy

    torch.set_num_threads(1)
    policies = {name: load_policy(agent, home_root=Path(home_root)) for name, agent in agents.items()}
    player = GamePlayer(spec, policies, Path(home_root), replay_dir, len(games), meta, write_replays=False)
    try:
        return list(player.play(games))
    finally:
        player.close()


def run_on_ray(todo: list[ScheduledGame], agents: dict[str, Agent], spec: GameSpec, home: LeagueHome, tid: int,
               workers: int, address: str | None) -> Iterator[GameOutcome]:
    try:
        import ray
    except ImportError:
        raise LeagueError("The Ray backend needs Ray: pip install 'rl-league[ray]'.") from None
    started_here = not ray.is_initialized()
    if started_here:
        try:
            if address:
                ray.init(address=address, log_to_driver=False)
            else:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        except ConnectionError as exc:
            raise LeagueError(f"Cannot reach a Ray cluster at {address}: {exc}") from None
    try:
        task = ray.remote(num_cpus=1)(_play)
        chunks = [todo[i:i + GAMES_PER_TASK] for i in range(0, len(todo), GAMES_PER_TASK)]
        pending = [task.remote(chunk, agents, spec, str(home.root), f"replays/tournament-{tid}",
                               {"tournament_id": tid}) for chunk in chunks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield from ray.get(done[0])
    finally:
        if started_here:
            ray.shutdown()
