"""Watching a game as it plays: one game on one arena, held back to the speed of its clock.

    watch_game(spec, policies, "ppo-1v1-v13", "necto", seed=7, live_path=home.live / "x.replay",
               viewer=None, speed=1.0)                                       # `league watch`

A watched game is one game on one in-process arena (arena.tournament_play.GamePlayer, the
tournaments' player, so a side may be a mixed team), held back to `speed` times real time
(arena.pacing). Each frame goes to the viewer as it is played, and the game so far is rewritten as
a replay under the league home (`live/`, arena.live_folder; atomically) about twice a second, with
the metadata key `live` true (arena.replay.is_live), so the dashboard's Live page shows it while it
plays; the last write holds the whole game. A watched game is not recorded in the league and moves
no rating. Nothing here runs unless a game is watched: tournaments and training pay nothing for it.
A replay played back to a viewer is arena.pacing.send_replay; training's look at a snapshot is
arena.background_viewer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.policy import Policy
from arena.engine.game import GameSpec
from arena.pacing import Pacer
from arena.replay import EVENT_KINDS, LIVE_KEY, write_replay
from arena.tournament import not_this_size
from arena.tournament_play import GamePlayer
from arena.viewers import Viewer
from arena.viewers.frame import Frame
from league.errors import LeagueError
from league.game_values import BOOST_PADS, TICKS_PER_SECOND
from league.registry import Registry
from league.schedule import ScheduledGame
from league.teams import check_apart, member_names, parse_side

LIVE_WRITE_SECONDS = 0.5  # how often (wall clock) the game so far is rewritten for the dashboard


def watch_sides(registry: Registry, a: str, b: str, team_size: int) -> tuple[str, str]:
    """Both sides of a watched game: each an agent or a mixed team of `team_size` members (league.teams),
    every member in the league (retired ones too: nothing is recorded) and playing this team size. An
    agent may play itself; a team shares no member with the other side."""
    sides = (parse_side(a, team_size), parse_side(b, team_size))
    for name in member_names(sides):
        agent = registry.agent_store.get(name)
        if not agent.plays(team_size):
            raise LeagueError(not_this_size(agent, team_size))
    check_apart(*sides)
    return sides


@dataclass(frozen=True)
class Watched:
    """How a watched game ended."""

    blue: str
    orange: str
    score: tuple[int, int]
    length_seconds: float
    frames: int
    live_path: Path | None


def watch_game(spec: GameSpec, policies: dict[str, Policy], blue: str, orange: str, seed: int, *,
               live_path: Path | None, viewer: Viewer | None = None, speed: float = 1.0,
               deterministic: bool = True, on_goal: Callable[[int, int, tuple[int, int]], None] | None = None) -> Watched:
    """Play one timed game of `blue` against `orange` (agents or mixed teams, their members' policies in
    `policies`) from `seed`, at `speed` times real time: each frame to `viewer`, the game so far to
    `live_path` every LIVE_WRITE_SECONDS (and whole at the end). `on_goal(step, team, score)` after each goal."""
    spec = GameSpec(team_size=spec.team_size, tick_skip=spec.tick_skip, mode="timed", game_seconds=spec.game_seconds)
    game = ScheduledGame(0, blue, orange, seed)
    pacer = Pacer(spec.step_seconds, speed)
    state = {"written": -math.inf, "goals": 0, "frames": 0}  # the first frame is written at once
    player: GamePlayer

    def observe(t: int, ball: np.ndarray, cars: np.ndarray, events: list) -> None:
        ev = events[0]
        goals = [(s, tm) for s, k, _, tm in ev if k == EVENT_KINDS["goal"]]
        score = (sum(tm == 0 for _, tm in goals), sum(tm == 1 for _, tm in goals))
        for s, team in goals[state["goals"]:]:
            if on_goal is not None:
                on_goal(s, team, score)
        state["goals"] = len(goals)
        pacer.wait(t)
        if viewer is not None:
            viewer.send(_frame(player, game, t, ball, cars, score))
        state["frames"] += 1
        if live_path is not None and time.monotonic() - state["written"] >= LIVE_WRITE_SECONDS:
            replay = player.replay_of(game, ball[:t + 1, 0], cars[:t + 1, 0], ev, score, t * spec.step_seconds)
            replay.meta[LIVE_KEY] = True
            write_replay(live_path, replay)
            state["written"] = time.monotonic()

    player = GamePlayer(spec, policies, Path("."), "", 1, {LIVE_KEY: False}, write_replays=False,
                        deterministic=deterministic, observer=observe)
    try:
        (outcome,) = player.play([game])
    finally:
        player.close()
    if live_path is not None:
        write_replay(live_path, outcome.replay_bytes)
    return Watched(blue, orange, (outcome.blue_goals, outcome.orange_goals), outcome.length_seconds, state["frames"],
                   live_path)


def _frame(player: GamePlayer, game: ScheduledGame, t: int, ball: np.ndarray, cars: np.ndarray,
           score: tuple[int, int]) -> Frame:
    """Step t of arena 0 as a viewer's frame, with the boost pads as they are now."""
    one = player.replay_of(game, ball[t:t + 1, 0], cars[t:t + 1, 0], [], (0, 0), 0.0)
    arrays = getattr(player.worker, "last_arrays", None)
    pads = np.ones(len(BOOST_PADS), bool) if t == 0 or arrays is None else arrays.pads[0] > 0.5
    return Frame(t, t * player.spec.tick_skip / TICKS_PER_SECOND, one.ball[0], one.cars[0], one.boost[0],
                 one.on_ground[0], one.demolished[0], tuple(one.teams), score, pads)
