"""Batched reads of RocketSim's `Arena.get_gym_state()` into the raw arrays agents.obs.build_obs takes.

`get_gym_state()` returns one tuple per arena: game data [4], boost pads [2, 34], ball [2, 25]
and one [2, 36] array per car (row 0 in the blue frame, row 1 pre-mirrored for orange). We only
use row 0 and let build_obs do the mirroring, so there is one mirroring implementation.

Reading M arenas costs two numpy calls, not M: every two-row array of every arena is joined
with one `np.concatenate(axis=1)` (cheap because the arrays come Fortran-ordered, so joining
along columns is a straight copy), every game-data array with another, and each output is one
fancy index into the joined rows. Flattening the arrays one by one instead costs ~3x more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents import obs as raw  # raw car columns (raw.CAR_POS, ...) differ from the gym-state ones below
from agents.obs import BALL_RAW_DIM, CAR_RAW_DIM, N_BOOST_PADS

DOUBLEJUMP_MAX_DELAY = 1.25  # seconds after a jump a flip or double jump is allowed (RLGym's common_values)

# Game data [4].
GAME_MODE, GAME_LAST_HIT_CAR_ID, GAME_BLUE_SCORE, GAME_ORANGE_SCORE = 0, 1, 2, 3
GAME_WIDTH = 4
# Boost pads [34] (row 0: blue order; row 1 reversed), 1.0 = active.
# One rigid body (ball row, or car row from column 11): position, quaternion (w, x, y, z),
# linear velocity, angular velocity, forward, right, up, (pitch, yaw, roll).
RB_POS, RB_QUAT, RB_VEL, RB_ANG_VEL = slice(0, 3), slice(3, 7), slice(7, 10), slice(10, 13)
RB_FWD, RB_RIGHT, RB_UP, RB_PYR = slice(13, 16), slice(16, 19), slice(19, 22), slice(22, 25)
RB_WIDTH = 25
# One car row [36]: id, team, goals, saves, shots, demos, boost pickups, is demoed, on ground,
# hit the ball in the last 8 ticks, boost (0-100), then its rigid body.
CAR_ID, CAR_TEAM, CAR_DEMOED, CAR_ON_GROUND, CAR_BOOST, CAR_RB = 0, 1, 7, 8, 10, 11
CAR_ROW = 36

# Offsets in one arena's joined row 0: pads, ball, then each car.
PADS_AT = 0
BALL_AT = PADS_AT + N_BOOST_PADS
CARS_AT = BALL_AT + RB_WIDTH


def _cols(s: slice) -> list[int]:
    return list(range(s.start, s.stop))


# Columns of a car row, in agents.obs raw car order: pos, forward, up, vel, ang vel, boost,
# on ground, demoed.
CAR_RAW_COLS = np.array(
    [CAR_RB + c for part in (RB_POS, RB_FWD, RB_UP, RB_VEL, RB_ANG_VEL) for c in _cols(part)]
    + [CAR_BOOST, CAR_ON_GROUND, CAR_DEMOED]
)
# Columns of the ball row, in agents.obs raw ball order: pos, vel, ang vel.
BALL_RAW_COLS = np.array([c for part in (RB_POS, RB_VEL, RB_ANG_VEL) for c in _cols(part)])
assert len(CAR_RAW_COLS) == CAR_RAW_DIM and len(BALL_RAW_COLS) == BALL_RAW_DIM


@dataclass
class ArenaArrays:
    """The state of E arenas in the blue frame, as agents.obs.build_obs takes it.

    ball, cars and pads are non-overlapping views of one [E, 9 + C * 18 + 34] array (one gather
    reads them all), so writing one (as fill_demolished writes cars) leaves the others alone.
    """

    ball: np.ndarray  # [E, 9] float32
    cars: np.ndarray  # [E, C, 18] float32, car-id order
    pads: np.ndarray  # [E, 34] float32, 1.0 = available, blue order
    arena_score: np.ndarray  # [E, 2] int64: RocketSim's running goal counters (never reset)


class GymStateReader:
    """Reads `get_gym_state()` of arenas that each hold `n_cars` cars into ArenaArrays."""

    def __init__(self, n_cars: int):
        self.n_cars = n_cars
        self.width = CARS_AT + n_cars * CAR_ROW
        car_starts = CARS_AT + CAR_ROW * np.arange(n_cars)
        car_cols = (car_starts[:, None] + CAR_RAW_COLS[None, :]).ravel()
        self._id_cols = car_starts + CAR_ID
        # One gather picks ball, cars and pads in agents.obs raw order; the outputs are views of it.
        self._raw_cols = np.concatenate([BALL_AT + BALL_RAW_COLS, car_cols, PADS_AT + np.arange(N_BOOST_PADS)])
        self._score_cols = np.array([GAME_BLUE_SCORE, GAME_ORANGE_SCORE])

    def rows(self, arenas) -> tuple[np.ndarray, np.ndarray]:
        """Game data [E, 4] and every arena's blue-frame row [E, width] (pads, ball, cars)."""
        states = [arena.get_gym_state() for arena in arenas]
        n = len(states)
        body = np.concatenate([part for state in states for part in state[1:]], axis=1)[0]
        if body.size != n * self.width:
            raise ValueError(
                f"get_gym_state returned {body.size // max(n, 1)} values per arena; expected "
                f"{self.width} for {self.n_cars} cars"
            )
        game = np.concatenate([state[0] for state in states])
        return game.reshape(n, GAME_WIDTH), body.reshape(n, self.width)

    def car_ids(self, arenas) -> np.ndarray:
        """RocketSim car ids [E, C] in the order get_gym_state lists the cars."""
        return self.rows(arenas)[1][:, self._id_cols].astype(np.int64)

    def read(self, arenas) -> ArenaArrays:
        game, body = self.rows(arenas)
        raw_rows = body[:, self._raw_cols]  # [E, 9 + C * 18 + 34]
        cars_end = BALL_RAW_DIM + self.n_cars * CAR_RAW_DIM
        return ArenaArrays(
            ball=raw_rows[:, :BALL_RAW_DIM],
            cars=raw_rows[:, BALL_RAW_DIM:cars_end].reshape(len(body), self.n_cars, CAR_RAW_DIM),
            pads=raw_rows[:, cars_end:],
            arena_score=game[:, self._score_cols].astype(np.int64),
        )


def check_car_order(reader: GymStateReader, arenas) -> None:
    """get_gym_state lists cars in its own map order; we rely on it being ascending car ids."""
    ids = reader.car_ids(arenas)
    if not (np.diff(ids, axis=1) > 0).all():
        raise RuntimeError(
            f"RocketSim's get_gym_state listed cars out of id order ({ids[0].tolist()}); "
            "arena.engine.gym_state needs updating for this RocketSim version"
        )


def fill_demolished(cars_raw: np.ndarray, car_objects: list[list]) -> None:
    """Replace a demolished car's physics with what RocketSim's CarState reports, in place.

    While a car is demolished its rigid body is out of the world and get_gym_state reports it
    at the origin, whereas Car.get_state() (what RLGym's engine and every RLGym obs builder
    read) keeps its last position. Both routes must agree on the contract, so the few
    demolished cars of a step are read object by object.
    """
    demolished = cars_raw[:, :, raw.CAR_DEMOED] > 0
    if not demolished.any():  # the common case: one reduction, no Python loop
        return
    for env, car in np.argwhere(demolished).tolist():
        state = car_objects[env][car].get_state()
        rot = state.rot_mat.as_numpy().reshape(3, 3)  # rows: forward, right, up
        row = cars_raw[env, car]
        row[raw.CAR_POS] = state.pos.as_numpy()
        row[raw.CAR_VEL] = state.vel.as_numpy()
        row[raw.CAR_ANG_VEL] = state.ang_vel.as_numpy()
        row[raw.CAR_FWD] = rot[0]
        row[raw.CAR_UP] = rot[2]


def read_has_flip(car_objects: list[list]) -> np.ndarray:
    """[E, C] 1.0 where the car still has its flip, as RLGym's Car.has_flip has it (not flipped or
    double-jumped since it left the ground, and within DOUBLEJUMP_MAX_DELAY of its jump). Read car by
    car (get_gym_state has no such column): only games with an agent that reads the state pay it."""
    out = np.zeros((len(car_objects), len(car_objects[0]) if car_objects else 0), np.float32)
    for e, cars in enumerate(car_objects):
        for c, car in enumerate(cars):
            s = car.get_state()
            out[e, c] = not s.has_double_jumped and not s.has_flipped and s.air_time_since_jump < DOUBLEJUMP_MAX_DELAY
    return out
