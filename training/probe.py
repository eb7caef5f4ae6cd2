"""`league probe NAME`: how exploitable an agent is, measured by beating it.

    result = run_probe(home, registry, "mlp-1v1-v12", minutes=10, games=100)

A fresh learner, kickstarted like any other (training.kickstart), or one that starts from another
agent's weights (`init_from`, `league probe NAME --from AGENT`: a probe at the level of a strong target
must first reach it, and a copy of the teacher or a strong snapshot starts there), trains for
`minutes` with every env playing NAME (one slice of the self-play trainer, training.slices, with NAME
its best-response target: no self-play, no other opponent; NAME is frozen), then its last snapshot
plays `games` games against NAME, half on each side, with the most likely actions (as tournaments
play). The probe's win rate, with its 95% interval (league.probes), is a lower bound on NAME's
exploitability. The probe's games are not rated (a hunter's games would move NAME's rating for
reasons of its own), and its snapshots, a run named `probe-<NAME>-<k>` (a long NAME shortened, with a
short hash of it), are registered retired, so no opponent mix or tournament ever picks them up, even
when the probe is killed while it trains or plays; they stay for lineage.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from league.config import GAMES_MAX, Config, even_games_problem, team_size_of
from league.errors import LeagueError
from league.home import LeagueHome
from league.names import MAX_RUN_NAME_LENGTH, check_name, check_run_name, split_version
from league.probes import ProbeResult
from league.registry import Registry
from league.results import Record
from training.budget import Budget
from training.evaluation import play_recorded, player
from training.launch import train_config
from training.progress import OnProgress
from training.slices import Interrupted, Slice, train_slice

PROBE_GAME_SECONDS = 60.0
PROBE_NUMBER_ROOM = 5  # a probe run's "-<k>", k up to 9999
PROBE_HASH_LENGTH = 8  # hex digits of a long target name's sha256 in its probes' run names


def probe_config(home: LeagueHome, team_size: int, seed: int, user_file: Path | None = None,
                 sets: list[str] | None = None, init_from: str | None = None) -> Config:
    """The probe's training config, loaded once: the league's, what `init_from` is (its network, temperature and
    learning rate: training.launch.train_config), then `user_file` and `sets`, then the probe's own seed and no
    evaluation games. Its budget and its target are handed to the trainer as values (run_probe)."""
    cfg = train_config(home, f"{team_size}v{team_size}", user_file=user_file, sets=sets, init_from=init_from)
    return dataclasses.replace(cfg, seed=seed, training=dataclasses.replace(cfg.training, eval_games=0))


def probe_stem(target: str) -> str:
    """`probe-<target>`, the stem of every probe run of `target` (`<stem>-<k>`); for a target whose name
    leaves no room for that, its head and a short hash of the whole name, so every run name is valid."""
    stem = f"probe-{target}"
    if len(stem) <= MAX_RUN_NAME_LENGTH - PROBE_NUMBER_ROOM:
        return stem
    digest = hashlib.sha256(target.encode()).hexdigest()[:PROBE_HASH_LENGTH]
    return f"{stem[:MAX_RUN_NAME_LENGTH - PROBE_NUMBER_ROOM - PROBE_HASH_LENGTH - 1]}-{digest}"


def probe_name(registry: Registry, target: str) -> str:
    """The next free run name `<probe_stem(target)>-<k>`."""
    taken, stem = set(registry.agent_store.names()), probe_stem(target)
    k = 1
    while any(n == f"{stem}-{k}" or n.startswith(f"{stem}-{k}-v") for n in taken):
        k += 1
    return check_run_name(f"{stem}-{k}")


def retire_left_active(registry: Registry, target: str) -> None:
    """Retire snapshots of earlier probes of `target` still active: a probe killed before probes' snapshots
    were registered retired left them so."""
    run = re.compile(re.escape(probe_stem(target)) + r"-[0-9]+")
    for agent in registry.agent_store.all():
        if (split := split_version(agent.name)) and run.fullmatch(split[0]):
            registry.agent_store.set_status(agent.name, "retired")


def check_probe(registry: Registry, target: str, games: int, stage: str | None = None,
                init_from: str | None = None) -> int:
    """The team size a probe of `target` plays; one sentence for a probe that cannot be run."""
    agent = registry.agent_store.get(check_name(target))
    start = registry.agent_store.get(check_name(init_from)) if init_from else None
    if games < 2:
        raise LeagueError("A probe needs at least 2 games (half on each side); pass --games 2 or more.")
    if games > GAMES_MAX:  # the bound of every evaluation and match (league.config)
        raise LeagueError(f"--games must be between 2 and {GAMES_MAX}, got {games}.")
    if problem := even_games_problem(games):  # half on each side
        raise LeagueError(f"--games {problem}")
    sizes = agent.team_sizes
    team_size = team_size_of(stage) if stage else sizes[0] if sizes and len(sizes) == 1 else None
    if team_size is None:
        raise LeagueError(f"{target!r} plays more than one team size; pass --stage.")
    if not agent.plays(team_size):
        raise LeagueError(f"{target!r} does not play {team_size}v{team_size}.")
    if start is not None and (problem := start.not_a_start()) is not None:  # the trainer's, before any progress bar
        raise LeagueError(problem)
    if start is not None and not start.plays(team_size):
        raise LeagueError(f"{init_from!r} does not play {team_size}v{team_size}, which the probe of {target!r} plays.")
    return team_size


def run_probe(home: LeagueHome, registry: Registry, target: str, minutes: float, games: int, seed: int = 0,
              stage: str | None = None, user_file: Path | None = None, sets: list[str] | None = None,
              on_progress: OnProgress | None = None, on_games: Callable[[], None] | None = None,
              init_from: str | None = None) -> ProbeResult:
    """Train a probe against `target` for `minutes` (from `init_from`'s weights, or fresh), play it `games` games;
    the result, recorded."""
    team_size = check_probe(registry, target, games, stage, init_from)
    cfg = probe_config(home, team_size, seed, user_file, sets, init_from)
    retire_left_active(registry, target)
    start_steps = registry.agent_store.get(init_from).steps_trained if init_from else 0  # the probe's own count after
    hunt = Slice(probe_name(registry, target), cfg, Budget.from_limits(minutes=minutes), init_from=init_from,
                 target=target, snapshot_status="retired")
    try:
        result = train_slice(home, registry, hunt, on_progress)
    except Interrupted as stop:  # Ctrl-C: the final snapshot is saved, and it plays its games
        result = stop.result
    probe = result.versions[-1]
    if on_games is not None:
        on_games()
    goals = play_recorded(None, [(player(registry, probe, home.root), player(registry, target, home.root))], games,
                          team_size, PROBE_GAME_SECONDS, seed + 1, deterministic=True)[0]
    outcome = ProbeResult(**Record.from_goals(goals).counts(), target=target, probe=probe, team_size=team_size,
                          minutes=minutes, steps=result.steps - start_steps, seed=seed, start=init_from)
    registry.probe_store.add(outcome)
    return outcome
