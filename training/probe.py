"""`league probe NAME`: how exploitable an agent is, measured by beating it.

    result = run_probe(home, registry, "mlp-1v1-v12", minutes=10, games=100)

A fresh learner, kickstarted like any other (training.kickstart), trains for `minutes` with every
env playing NAME (training.best_response_to: no self-play, no other opponent; NAME is frozen),
then its last snapshot plays `games` games against NAME, half on each side, with the most likely
actions (as tournaments play). The probe's win rate, with its 95% interval (league.probes), is a
lower bound on NAME's exploitability. The probe's games are not rated (a hunter's games would move
NAME's rating for reasons of its own), and its snapshots, a run named `probe-<NAME>-<k>`, are
retired once measured, so no opponent mix or tournament picks them up; they stay for lineage.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agents.loading import load_policy
from league.config import Config, load_config, team_size_of
from league.errors import LeagueError
from league.home import LeagueHome
from league.names import check_name
from league.probes import ProbeResult
from league.registry import Registry
from training.evaluation import Player, play_recorded
from training.launch import cuda_available
from training.progress import OnProgress

PROBE_GAME_SECONDS = 60.0


def probe_config(home: LeagueHome, target: str, team_size: int, minutes: float, seed: int,
                 user_file: Path | None = None, sets: list[str] | None = None) -> Config:
    """The probe's training config: the league's, then `user_file` and `sets`, then the probe's own keys."""
    stage = f"{team_size}v{team_size}"
    own = [f"training.best_response_to={target}", f"training.minutes={minutes}", "training.steps=0",
           "training.eval_games=0", f"seed={seed}"]
    return load_config(stage=stage, user_file=user_file, home_file=home.config_path, sets=list(sets or []) + own,
                       gpu=cuda_available)


def probe_name(registry: Registry, target: str) -> str:
    """The next free run name `probe-<target>-<k>`."""
    taken = set(registry.agent_store.names())
    k = 1
    while any(n == f"probe-{target}-{k}" or n.startswith(f"probe-{target}-{k}-v") for n in taken):
        k += 1
    return check_name(f"probe-{target}-{k}")


def check_probe(registry: Registry, target: str, games: int, stage: str | None = None) -> int:
    """The team size a probe of `target` plays; one sentence for a probe that cannot be run."""
    agent = registry.agent_store.get(check_name(target))
    if games < 2:
        raise LeagueError("A probe needs at least 2 games (half on each side); pass --games 2 or more.")
    team_size = team_size_of(stage) if stage else agent.team_size
    if team_size is None:
        raise LeagueError(f"{target!r} plays more than one team size; pass --stage.")
    if not agent.plays(team_size):
        raise LeagueError(f"{target!r} does not play {team_size}v{team_size}.")
    return team_size


def run_probe(home: LeagueHome, registry: Registry, target: str, minutes: float, games: int, seed: int = 0,
              stage: str | None = None, user_file: Path | None = None, sets: list[str] | None = None,
              on_progress: OnProgress | None = None, on_games: Callable[[], None] | None = None) -> ProbeResult:
    """Train a probe against `target` for `minutes`, play it `games` games; the result, recorded."""
    from training.selfplay import SelfPlayTrainer

    team_size = check_probe(registry, target, games, stage)
    cfg = probe_config(home, target, team_size, minutes, seed, user_file, sets)
    name = probe_name(registry, target)
    result = SelfPlayTrainer(cfg, home, registry, name=name, on_progress=on_progress).run()
    probe = result.versions[-1]
    if on_games is not None:
        on_games()
    policies = [Player(n, load_policy(registry.agent_store.get(n), home_root=home.root)) for n in (probe, target)]
    goals = play_recorded(None, [(policies[0], policies[1])], games, team_size, PROBE_GAME_SECONDS, seed + 1,
                          deterministic=True)[0]
    for version in result.versions:
        registry.agent_store.set_status(version, "retired")
    outcome = ProbeResult(target=target, probe=probe, team_size=team_size, minutes=minutes, steps=result.steps,
                          games=len(goals), wins=sum(a > b for a, b in goals), draws=sum(a == b for a, b in goals),
                          losses=sum(a < b for a, b in goals), seed=seed)
    registry.probe_store.add(outcome)
    return outcome
