"""One moment of a game as the viewers are sent it, from a replay or from a game being played.

A `Frame` holds the ball and every car in the replay file's layout and units (docs/replay.md):
positions in uu, velocities in uu/s, angular velocities in rad/s, car orientation as (pitch,
yaw, roll) in radians (turned into matrices by arena.replay.car_rotations, the replay's own reading),
boost 0..100. Each viewer turns it into its own format.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from arena.replay import Replay


@dataclass(frozen=True)
class Frame:
    step: int  # decision step from the start of the game
    seconds: float  # game time since the start
    ball: np.ndarray  # [9] x, y, z, vx, vy, vz, wx, wy, wz
    cars: np.ndarray  # [C, 12] x, y, z, pitch, yaw, roll, vx, vy, vz, wx, wy, wz
    boost: np.ndarray  # [C] 0..100
    on_ground: np.ndarray  # [C] bool
    demolished: np.ndarray  # [C] bool
    teams: tuple[int, ...]  # team of each car: 0 blue, 1 orange
    score: tuple[int, int]  # goals so far: blue, orange
    pads: np.ndarray | None = None  # [34] bool, True: the pad is up (RLGym's order); None: not known (replays)


def replay_frames(replay: Replay, start_step: int = 0) -> Iterator[Frame]:
    """The replay's frames in order from `start_step`, each with the score after the goals before it."""
    dt = replay.seconds_per_step()
    teams = tuple(replay.teams)
    goals = sorted((g["step"], g["team"]) for g in replay.goals())
    score, g = [0, 0], 0
    for t in range(start_step, replay.steps):
        while g < len(goals) and goals[g][0] <= t:
            score[goals[g][1]] += 1
            g += 1
        yield Frame(t, t * dt, replay.ball[t], replay.cars[t], replay.boost[t], replay.on_ground[t],
                    replay.demolished[t], teams, (score[0], score[1]))

