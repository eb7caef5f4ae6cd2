"""Watching games: a replay sent to a viewer, and a live game played at the speed of its clock.

    send_replay(read_replay(path), open_viewer("rocketsimvis"), speed=1.0)   # `league replay play`
    watch_game(spec, policies, "ppo-1v1-v13", "necto", seed=7, live_path=home.live / "x.replay",
               viewer=None, speed=1.0)                                       # `league watch`

A watched game is one game on one in-process arena (arena.tournament_play.GamePlayer, the
tournaments' player, so a side may be a mixed team), held back to `speed` times real time.
Each frame goes to the viewer as it is played, and the game so far is rewritten as a replay
under the league home (`live/`, atomically) about twice a second, so the dashboard's Live page
shows it while it plays; the last write holds the whole game. A watched game is not recorded in
the league and moves no rating. Nothing here runs unless a game is watched: tournaments and
training pay nothing for it.
"""

from __future__ import annotations

import math
import os
import re
import stat
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.policy import Policy
from arena.engine.game import GameSpec
from arena.replay import EVENT_KINDS, Replay, write_replay
from arena.tournament import not_this_size
from arena.tournament_play import GamePlayer, fitted_file_name
from arena.viewers import Viewer, open_viewer
from arena.viewers.frame import Frame, replay_frames
from league.errors import LeagueError, quoted
from league.game_values import BOOST_PADS, TICKS_PER_SECOND
from league.registry import Registry
from league.schedule import ScheduledGame
from league.teams import check_apart, member_names, parse_side

MAX_SPEED = 100.0
LIVE_WRITE_SECONDS = 0.5  # how often (wall clock) the game so far is rewritten for the dashboard
VIEWER_THREAD = "rl-league-viewer"  # the background sender of `send_game_in_background`
KEEP_LIVE_FILES = 20  # the newest watched games kept in live/; older ones are removed when a new one starts
LIVE_NAME = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9]+-.+\.replay")  # live_file_name's names: all a prune removes
LIVE_KEY = "live"  # replay metadata: true while the game is being played


def check_speed(speed: float) -> float:
    """`speed` times real time: a finite number from 0 (as fast as the game plays) to MAX_SPEED."""
    if not (isinstance(speed, (int, float)) and math.isfinite(speed) and 0 <= speed <= MAX_SPEED):
        raise LeagueError(f"--speed must be a number from 0 (no waiting) to {MAX_SPEED:g} times real time, not {speed}.")
    return float(speed)


class Pacer:
    """Holds step t back until t * seconds_per_step / speed after the first step (speed 0: never waits)."""

    def __init__(self, seconds_per_step: float, speed: float):
        self.seconds_per_step, self.speed = seconds_per_step, check_speed(speed)
        self.start: float | None = None

    def wait(self, step: int) -> None:
        now = time.monotonic()
        if self.start is None:
            self.start = now - step * self.seconds_per_step / self.speed if self.speed else now
        if self.speed:
            delay = self.start + step * self.seconds_per_step / self.speed - now
            if delay > 0:
                time.sleep(delay)


def send_replay(replay: Replay, viewer: Viewer, speed: float = 1.0, start_step: int = 0) -> int:
    """Send `replay` from `start_step` to `viewer` at `speed` times real time; the frames sent."""
    pacer = Pacer(replay.seconds_per_step(), speed)
    sent = 0
    for frame in replay_frames(replay, start_step):
        pacer.wait(frame.step)
        viewer.send(frame)
        sent += 1
    return sent


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


def live_file_name(blue: str, orange: str, now: float | None = None) -> str:
    """A new live replay's name: UTC time, process id (two watchers never share one), the sides (long
    ones cut to fit a file name, with a hash: arena.tournament_play.fitted_file_name)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
    return fitted_file_name(f"{stamp}-{os.getpid()}-{blue}-vs-{orange}")


def live_folder(folder: Path) -> Path:
    """`folder` (a league home's live/), made if missing, when it is a folder of its own; else one sentence.
    A symbolic link (even to a folder), a file or a FIFO there is refused, never followed or replaced, so a
    watch writes and prunes only inside the home. Checked before anything is written."""
    try:
        folder.mkdir()
    except FileExistsError:  # a folder already, or something else at its name (a dangling link included)
        pass
    mode = folder.lstat().st_mode
    if not stat.S_ISDIR(mode):
        what = "a symbolic link" if stat.S_ISLNK(mode) else "a FIFO" if stat.S_ISFIFO(mode) else \
            "a file" if stat.S_ISREG(mode) else "not a plain folder"
        raise LeagueError(f"The league home's live folder {quoted(str(folder))} is not a folder but {what}: a watch "
                          "writes only inside the home, so move it aside and watch again.")
    return folder


def prune_live(folder: Path, keep: int = KEEP_LIVE_FILES) -> None:
    """Remove all but the `keep` newest watched games of the live folder: regular files named as
    live_file_name names them, looked at without following links. Anything else there (a link, dangling
    or not, a folder named *.replay, another file) is left alone; a `folder` that is itself a link is not
    entered; a file another watch removed a moment before is no error."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:  # missing, or not a folder of its own: nothing of ours to prune
        return
    try:
        found = []
        with os.scandir(fd) as entries:
            for entry in entries:
                if not LIVE_NAME.fullmatch(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # removed by another watch's prune
                    continue
                if stat.S_ISREG(st.st_mode):
                    found.append((st.st_mtime, entry.name))
        for _, name in sorted(found, reverse=True)[keep:]:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
    finally:
        os.close(fd)


def is_live(replay: Replay) -> bool:
    return replay.meta.get(LIVE_KEY) is True


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


class _Collect:
    """A viewer that keeps the frames it is sent."""

    name = "frames"

    def __init__(self) -> None:
        self.frames: list[Frame] = []

    def send(self, frame: Frame) -> None:
        self.frames.append(frame)

    def close(self) -> None:
        pass


def _stream(viewer: Viewer, frames: list[Frame], seconds_per_step: float) -> None:
    pacer = Pacer(seconds_per_step, 1.0)
    try:
        for frame in frames:
            pacer.wait(frame.step)
            viewer.send(frame)
    except (LeagueError, OSError):  # the viewer was closed: the game was only for watching
        pass
    finally:
        viewer.close()


def send_game_in_background(viewer_name: str, spec: GameSpec, policies: dict[str, Policy], blue: str, orange: str,
                            seed: int, deterministic: bool = False) -> threading.Thread | None:
    """Training's look at a snapshot: when `viewer_name` is running, play one game now at full speed (on
    this thread: the policies may be the learner's own network, which must not be read while it trains)
    and send its frames to the viewer at real time from a daemon thread, which is returned. None, at the
    cost of one port check, when the viewer is not running or the previous game is still being sent."""
    if any(t.name == VIEWER_THREAD and t.is_alive() for t in threading.enumerate()):
        return None
    try:
        viewer = open_viewer(viewer_name, tick_skip=spec.tick_skip)
    except LeagueError:
        return None
    try:
        collect = _Collect()
        watch_game(spec, policies, blue, orange, seed, live_path=None, viewer=collect, speed=0,
                   deterministic=deterministic)
    except BaseException:
        viewer.close()
        raise
    thread = threading.Thread(target=_stream, args=(viewer, collect.frames, spec.step_seconds), name=VIEWER_THREAD,
                              daemon=True)
    thread.start()
    return thread
