"""The observation layout every agent speaks, for every team size (documented in docs/contract.md).

One flat float32 vector per car, always seen from that car's team attacking +y (orange
observations are rotated 180 degrees about the z axis, and boost pads listed in reverse), so
a single network can play blue or orange, 1v1, 2v2 or 3v3:

    ball (9)       position, linear velocity, angular velocity
    self (25)      car block (see below) of the observing car
    mates (2x25)   up to 2 teammates, zero-padded, in car-id order
    opponents (3x25) up to 3 opponents, zero-padded, in car-id order
    pads (34)      1.0 where the boost pad is available
    game (3)       score difference, game seconds left, overtime flag

    car block (25): present, position (3), forward (3), up (3), linear velocity (3),
    angular velocity (3), boost, on ground, demolished, ball position relative to the car (3),
    ball velocity relative to the car (3)

`build_obs` is the one implementation: it works on whole batches of arenas held as arrays,
so the game runner never loops over environments or agents in Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

OBS_LAYOUT_VERSION = 1

MAX_TEAM_SIZE = 3
N_BOOST_PADS = 34

POS_COEF = 1.0 / 2300.0
VEL_COEF = 1.0 / 2300.0
ANG_VEL_COEF = 1.0 / math.pi
BOOST_COEF = 1.0 / 100.0
SCORE_DIFF_CLIP = 5.0
SECONDS_COEF = 1.0 / 300.0

# Raw physics columns of one car, in the blue team's frame (what the game layer hands in).
CAR_POS, CAR_FWD, CAR_UP, CAR_VEL, CAR_ANG_VEL = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12), slice(12, 15)
CAR_BOOST, CAR_ON_GROUND, CAR_DEMOED = 15, 16, 17
CAR_RAW_DIM = 18
# Raw ball columns.
BALL_POS, BALL_VEL, BALL_ANG_VEL = slice(0, 3), slice(3, 6), slice(6, 9)
BALL_RAW_DIM = 9

CAR_BLOCK = 25
BALL_BLOCK = 9
GAME_BLOCK = 3


@dataclass(frozen=True)
class Block:
    name: str
    start: int
    size: int

    @property
    def slice(self) -> slice:
        return slice(self.start, self.start + self.size)


def _layout() -> dict[str, Block]:
    blocks, at = {}, 0
    for name, size in (
        ("ball", BALL_BLOCK), ("self", CAR_BLOCK), ("mate0", CAR_BLOCK), ("mate1", CAR_BLOCK),
        ("opp0", CAR_BLOCK), ("opp1", CAR_BLOCK), ("opp2", CAR_BLOCK), ("pads", N_BOOST_PADS), ("game", GAME_BLOCK),
    ):
        blocks[name] = Block(name, at, size)
        at += size
    return blocks


LAYOUT = _layout()
OBS_DIM = sum(b.size for b in LAYOUT.values())  # 196

# Offsets inside a car block.
C_PRESENT = 0
C_POS, C_FWD, C_UP = slice(1, 4), slice(4, 7), slice(7, 10)
C_VEL, C_ANG_VEL = slice(10, 13), slice(13, 16)
C_BOOST, C_ON_GROUND, C_DEMOED = 16, 17, 18
C_BALL_REL_POS, C_BALL_REL_VEL = slice(19, 22), slice(22, 25)

# Offsets inside the game block.
G_SCORE_DIFF, G_SECONDS_LEFT, G_OVERTIME = 0, 1, 2

# Rotating 180 degrees about z maps (x, y, z) to (-x, -y, z) for positions, directions and
# angular velocities alike.
_MIRROR = np.array([-1.0, -1.0, 1.0], dtype=np.float32)


def mirror_vectors(raw: np.ndarray) -> np.ndarray:
    """Rotate every 3-vector column group of raw car/ball rows into the orange frame."""
    out = raw.copy()
    n_vec = 5 if raw.shape[-1] == CAR_RAW_DIM else 3
    for k in range(n_vec):
        out[..., 3 * k:3 * k + 3] *= _MIRROR
    return out


def _car_blocks(cars: np.ndarray, ball: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Car blocks [..., CAR_BLOCK] from raw cars [..., CAR_RAW_DIM] and ball [..., BALL_RAW_DIM] (same frame)."""
    out = np.zeros(cars.shape[:-1] + (CAR_BLOCK,), dtype=np.float32)
    out[..., C_PRESENT] = present
    out[..., C_POS] = cars[..., CAR_POS] * POS_COEF
    out[..., C_FWD] = cars[..., CAR_FWD]
    out[..., C_UP] = cars[..., CAR_UP]
    out[..., C_VEL] = cars[..., CAR_VEL] * VEL_COEF
    out[..., C_ANG_VEL] = cars[..., CAR_ANG_VEL] * ANG_VEL_COEF
    out[..., C_BOOST] = cars[..., CAR_BOOST] * BOOST_COEF
    out[..., C_ON_GROUND] = cars[..., CAR_ON_GROUND]
    out[..., C_DEMOED] = cars[..., CAR_DEMOED]
    out[..., C_BALL_REL_POS] = (ball[..., BALL_POS] - cars[..., CAR_POS]) * POS_COEF
    out[..., C_BALL_REL_VEL] = (ball[..., BALL_VEL] - cars[..., CAR_VEL]) * VEL_COEF
    out *= present[..., None]  # absent slots are all zeros
    return out


def _slot_table(teams: np.ndarray) -> np.ndarray:
    """[C, 6] car index for each observer's self, mate0-1, opp0-2 slots (C = the empty slot).

    Every arena of a batch has the same team layout (the runner builds them alike), so one
    table serves the whole batch; a batch that breaks this is refused.
    """
    layout = teams[0]
    if not (teams == layout).all():
        raise ValueError("build_obs needs the same team layout in every arena of a batch")
    n_cars = len(layout)
    table = np.full((n_cars, 6), n_cars, dtype=np.intp)
    for o in range(n_cars):  # over car slots (at most 6), not over arenas
        mates = [c for c in range(n_cars) if c != o and layout[c] == layout[o]][:2]
        opps = [c for c in range(n_cars) if layout[c] != layout[o]][:3]
        table[o, 0] = o
        table[o, 1:1 + len(mates)] = mates
        table[o, 3:3 + len(opps)] = opps
    return table


def build_obs(
    ball: np.ndarray,
    cars: np.ndarray,
    teams: np.ndarray,
    pads: np.ndarray,
    score: np.ndarray,
    seconds_left: np.ndarray,
    overtime: np.ndarray,
) -> np.ndarray:
    """Observations for every car of every arena, in one batched pass.

    ball [E, 9], cars [E, C, 18] (blue frame, car-id order), teams [E, C] (0 blue, 1 orange),
    pads [E, 34] (1.0 available, blue order), score [E, 2] (blue, orange goals),
    seconds_left [E], overtime [E]. Every arena holds the same C cars (C/2 per team).
    Returns [E * C, OBS_DIM] float32, row e * C + c for car c of arena e.
    """
    n_envs, n_cars, _ = cars.shape
    orange = teams == 1  # [E, C]
    # Both frames for everything; each observer picks its own.
    cars_m = mirror_vectors(cars)
    ball_m = mirror_vectors(ball)
    frames_ball = np.where(orange[:, :, None], ball_m[:, None], ball[:, None])  # [E, obs C, 9]

    out = np.zeros((n_envs, n_cars, OBS_DIM), dtype=np.float32)
    out[:, :, LAYOUT["ball"].slice] = np.concatenate(
        [frames_ball[..., BALL_POS] * POS_COEF, frames_ball[..., BALL_VEL] * VEL_COEF,
         frames_ball[..., BALL_ANG_VEL] * ANG_VEL_COEF], axis=-1)

    # Every car's block in both frames, plus an all-zero block for empty slots: [2, E, C + 1, 25].
    present = np.ones((n_envs, n_cars), np.float32)
    blocks = np.zeros((2, n_envs, n_cars + 1, CAR_BLOCK), np.float32)
    blocks[0, :, :n_cars] = _car_blocks(cars, ball[:, None, :], present)
    blocks[1, :, :n_cars] = _car_blocks(cars_m, ball_m[:, None, :], present)
    # One gather fills self, mates and opponents for every observer at once.
    slots = blocks[orange.astype(np.intp)[:, :, None], np.arange(n_envs)[:, None, None], _slot_table(teams)[None]]
    out[:, :, LAYOUT["self"].start:LAYOUT["opp2"].start + CAR_BLOCK] = slots.reshape(n_envs, n_cars, -1)

    pads_m = pads[:, ::-1]
    out[:, :, LAYOUT["pads"].slice] = np.where(orange[:, :, None], pads_m[:, None, :], pads[:, None, :])

    own = np.where(orange, score[:, 1:2], score[:, 0:1])
    opp = np.where(orange, score[:, 0:1], score[:, 1:2])
    game = out[:, :, LAYOUT["game"].slice]
    game[..., G_SCORE_DIFF] = np.clip(own - opp, -SCORE_DIFF_CLIP, SCORE_DIFF_CLIP) / SCORE_DIFF_CLIP
    game[..., G_SECONDS_LEFT] = (seconds_left * SECONDS_COEF)[:, None]
    game[..., G_OVERTIME] = overtime.astype(np.float32)[:, None]
    out[:, :, LAYOUT["game"].slice] = game
    return out.reshape(n_envs * n_cars, OBS_DIM)
