"""The community bots' scripted kickoffs, played at the runner's step: what the adapters leave out
by default (agents.community.bots.KINDS: "the network plays every kickoff"), here to measure what
it changes (training.measure.kickoffs; docs/community.md).

Both bots script the kickoff in their `bot.py`, outside the network:

- Necto: the car closest to the ball (of two equally close teammates, the one on the left) plays a
  fixed list of controls, one per tick (KICKOFF_CONTROLS, 168 ticks: boost ahead, steer left, jump,
  a diagonal dodge, then air roll), while the ball waits at the centre.
- Element: the closest car plays a speed flip, a state machine read every tick: turn slightly,
  drive a set distance, jump, release, dodge diagonally and cancel the flip until it lands, while
  the ball is more than 600 uu away.

Here a policy acts every 8 ticks (the bots' tick skip) and its controls are held for all 8, so a
script is played at that step: Necto's list is read at its tick 8k on step k; Element's machine is
read once a step, with one step of jump released between the jump and the dodge (held for 8
ticks, the jump would run into the dodge and no flip would start). These are approximations of
the bots' own kickoffs, not reproductions.

A kickoff is under way in an arena while the ball rests at the centre (|x|, |y| < 1 uu, speed
under 1 uu/s), as RocketSim places it; it ends at the first touch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.community.bots import CommunityPolicy
from agents.game_state import N_CONTROLS, GameArrays
from agents.policy import Policy, State

TICK_SKIP = 8
# Necto's bot.py KICKOFF_CONTROLS (throttle, steer, pitch, yaw, roll, jump, boost, handbrake), each row n ticks.
_NECTO_SCRIPT = (
    (44, (1, 0, 0, 0, 0, 0, 1, 0)),
    (16, (1, -1, 0, 0, 0, 0, 1, 0)),
    (8, (1, 0, 0, 0, 0, 1, 1, 0)),
    (4, (1, 0, 0, 0, 0, 0, 1, 0)),
    (4, (1, 0, -0.7, 0.8, 0, 1, 1, 0)),
    (52, (1, 0, 1, 0, 0, 0, 1, 0)),
    (40, (1, 0, 0.5, 0, 1, 0, 0, 0)),
)
NECTO_TICKS = np.array([row for n, row in _NECTO_SCRIPT for _ in range(n)], np.float32)  # [168, 8]
JUMP = 5


def step_controls(ticks: np.ndarray, tick_skip: int = TICK_SKIP) -> np.ndarray:
    """A per-tick script as one control per step of `tick_skip` ticks, keeping its jumps: a step in which the
    script presses jump plays the pressing tick (a jump or a dodge starts); else a step in which it lets jump
    go plays its last tick (released, so the next press is a new one); else the step's first tick."""
    steps = []
    for start in range(0, len(ticks), tick_skip):
        window = range(start, min(start + tick_skip, len(ticks)))
        held = [ticks[t, JUMP] > 0 for t in window]
        before = ticks[start - 1, JUMP] > 0 if start else False
        presses = [t for t, h, p in zip(window, held, [before, *held[:-1]]) if h and not p]
        released = any(p and not h for h, p in zip(held, [before, *held[:-1]]))
        steps.append(ticks[presses[0]] if presses else ticks[window[-1]] if released else ticks[start])
    return np.array(steps, np.float32)


NECTO_STEPS = step_controls(NECTO_TICKS)  # [21, 8]
TIE_UU = 10.0  # Necto: teammates within this distance of each other's distance are equally close
ELEMENT_VALID_UU = 600.0  # Element plays its flip while the ball is further than this

# The state of a row's kickoff: -1 no kickoff seen; -2 not the taker of this one; k >= 0 its k-th step.
NO_KICKOFF, NOT_TAKER = -1, -2
_ALIGN, _DRIVE, _JUMP, _RELEASE, _DODGE, _CANCEL, _DONE = range(7)


def kickoff_envs(game: GameArrays) -> np.ndarray:
    """[E] bool: the ball rests at the centre (a kickoff under way)."""
    ball = game.ball
    return (np.abs(ball[:, 0]) < 1.0) & (np.abs(ball[:, 1]) < 1.0) & (np.linalg.norm(ball[:, 3:6], axis=1) < 1.0)


def team_frame(game: GameArrays, env: np.ndarray, car: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows' car position and forward in their own team's frame (orange: x and y negated, as the bots invert)."""
    sign = np.where(game.teams[car] == 1, -1.0, 1.0)
    flip = np.stack([sign, sign, np.ones_like(sign)], axis=1)
    cars = game.cars[env, car]
    return cars[:, 0:3] * flip, cars[:, 3:6] * flip


def takers(game: GameArrays, env: np.ndarray, car: np.ndarray, left_breaks_ties: bool) -> np.ndarray:
    """[R] bool: each row's car is its team's kickoff taker (closest to the ball; Necto: the left of a tie)."""
    out = np.zeros(len(env), bool)
    for r, (e, c) in enumerate(zip(env, car)):
        team = np.flatnonzero(game.teams == game.teams[c])
        xy = game.cars[e, team, 0:2]
        dist = np.linalg.norm(xy - game.ball[e, 0:2], axis=1)
        mine = dist[team == c][0]
        if not left_breaks_ties:
            out[r] = team[int(np.argmin(dist))] == c
            continue
        if abs(dist.min() - mine) > TIE_UU:
            continue
        sign = 1.0 if game.teams[c] == 0 else -1.0  # blue's left is -x, orange's +x
        tied = [t for t, d in zip(team, dist) if abs(d - mine) <= TIE_UU and t != c]
        out[r] = all(sign * game.cars[e, c, 0] < sign * game.cars[e, t, 0] for t in tied)
    return out


@dataclass
class KickoffState:
    inner: State  # the adapter's own memory
    step: np.ndarray  # [R] int: NO_KICKOFF, NOT_TAKER, or the kickoff step
    machine: np.ndarray  # [R] int: Element's flip state (_ALIGN.._DONE)
    start: np.ndarray  # [R, 6] the car's position and forward in its team frame at the kickoff's start
    plan: np.ndarray  # [R, 4] direction, initial angle, drive distance, yaw strength


class ScriptedKickoffs(Policy):
    """A community bot (CommunityPolicy) playing its own bot.py's kickoff script, at the runner's step."""

    reads_game = True
    speaks_controls = True
    recurrent = True

    def __init__(self, bot: CommunityPolicy, kind: str):
        if kind not in ("necto", "element"):
            raise ValueError(f"no scripted kickoff for {kind!r}")
        self.bot, self.kind, self.name = bot, kind, f"{bot.name}+kickoff"

    def initial_state(self, n: int) -> KickoffState:
        return KickoffState(self.bot.initial_state(n), np.full(n, NO_KICKOFF), np.zeros(n, int), np.zeros((n, 6)),
                            np.zeros((n, 4)))

    def act(self, obs, state=None, episode_start=None, deterministic=False):
        raise NotImplementedError(f"{self.name} reads the game state, not the league's observation (act_game)")

    def act_game(self, game: GameArrays, rows: np.ndarray, state: KickoffState | None = None,
                 episode_start: np.ndarray | None = None, deterministic: bool = False
                 ) -> tuple[np.ndarray, KickoffState]:
        state = state if state is not None else self.initial_state(len(rows))
        controls, state.inner = self.bot.act_game(game, rows, state.inner, episode_start, deterministic)
        env, car = np.divmod(rows, game.n_cars)
        on = kickoff_envs(game)[env]
        if episode_start is not None:
            state.step[np.asarray(episode_start, bool)] = NO_KICKOFF
        state.step[~on] = NO_KICKOFF
        fresh = on & (state.step == NO_KICKOFF)
        if fresh.any():
            taker = takers(game, env[fresh], car[fresh], left_breaks_ties=self.kind == "necto")
            state.step[fresh] = np.where(taker, 0, NOT_TAKER)
            if self.kind == "element":
                self._plan(game, env, car, np.flatnonzero(fresh)[taker], state)
        playing = np.flatnonzero(on & (state.step >= 0))
        if len(playing):
            scripted = (self._necto(state, playing) if self.kind == "necto"
                        else self._element(game, env, car, playing, state))
            done = np.isnan(scripted[:, 0])
            controls = controls.copy()
            controls[playing[~done]] = scripted[~done]
            state.step[playing] += 1
            state.step[playing[done]] = NOT_TAKER  # the script has ended: the network plays on
        return controls, state

    @staticmethod
    def _necto(state: KickoffState, playing: np.ndarray) -> np.ndarray:
        step = state.step[playing]
        out = np.full((len(playing), N_CONTROLS), np.nan, np.float32)
        within = step < len(NECTO_STEPS)
        out[within] = NECTO_STEPS[step[within]]
        return out

    @staticmethod
    def _plan(game: GameArrays, env: np.ndarray, car: np.ndarray, picked: np.ndarray, state: KickoffState) -> None:
        """Speedflip.__init__: the direction, angle, distance and yaw of the flip from the car's start."""
        pos, fwd = team_frame(game, env[picked], car[picked])
        state.start[picked] = np.concatenate([pos, fwd], axis=1)
        state.machine[picked] = _ALIGN
        for i, (x, _) in zip(picked, pos[:, :2]):
            direction = 1.0 if x > 0 else -1.0
            if abs(x) < 25:
                state.plan[i] = (direction, np.pi / 22, 290, 1.0)
            elif abs(x) < 500:
                state.plan[i] = (-direction, np.pi / 16, 330, 0.6)
            else:
                state.plan[i] = (direction, np.pi / 16, 240, 0.4)

    @staticmethod
    def _element(game: GameArrays, env: np.ndarray, car: np.ndarray, playing: np.ndarray,
                 state: KickoffState) -> np.ndarray:
        """Speedflip.get_action, once a step (see the module doc)."""
        out = np.full((len(playing), N_CONTROLS), np.nan, np.float32)
        pos, fwd = team_frame(game, env[playing], car[playing])
        cars = game.cars[env[playing], car[playing]]
        ball_dist = np.linalg.norm(game.ball[env[playing], 0:3] - cars[:, 0:3], axis=1)
        for j, i in enumerate(playing):
            if state.machine[i] == _DONE or ball_dist[j] <= ELEMENT_VALID_UU:
                continue
            direction, angle0, distance, yaw = state.plan[i]
            start_pos, start_fwd = state.start[i, :3], state.start[i, 3:]
            on_ground = cars[j, 16] > 0.5
            if state.machine[i] == _ALIGN:
                angle = np.arccos(np.clip(np.dot(fwd[j], start_fwd), -1.0, 1.0))
                if angle < angle0:
                    out[j] = (1, -direction, 0, 0, 0, 0, 1, 0)
                    continue
                state.machine[i] = _DRIVE
            if state.machine[i] == _DRIVE:
                if np.linalg.norm(pos[j] - start_pos) < distance:
                    out[j] = (1, 0, 0, 0, 0, 0, 1, 0)
                    continue
                state.machine[i] = _JUMP
            if state.machine[i] == _JUMP:
                state.machine[i] = _RELEASE
                out[j] = (1, 0, 0, 0, 0, 1, 1, 0)
                continue
            if state.machine[i] == _RELEASE:
                state.machine[i] = _DODGE
                out[j] = (1, 0, 0, 0, direction, 0, 1, 0)
                continue
            if state.machine[i] == _DODGE:
                state.machine[i] = _CANCEL
                out[j] = (1, 0, -1, 0, direction, 1, 1, 0)
                continue
            if not on_ground:  # _CANCEL: cancel the flip until the car lands
                speed = np.linalg.norm(cars[j, 9:12])
                out[j] = (1, 0, 1, yaw * direction, direction, 0, 1.0 if speed < 2295 else 0.0, 0)
                continue
            state.machine[i] = _DONE
            out[j] = (1, 0, 0, 0, 0, 0, 1, 0)
        return out
