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

import functools
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
_MIRROR = np.array([-1.0, -1.0, 1.0])


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


# The ball-relative vectors of a car block: (ball columns, car columns, coefficient) per value.
_REL_BALL = np.r_[BALL_POS, BALL_VEL]
_REL_CAR = np.r_[CAR_POS, CAR_VEL]
_REL_COEF = np.array([POS_COEF] * 3 + [VEL_COEF] * 3)
_REL_MIRROR = np.tile(_MIRROR, 2)
_REL_DIM = 6
# Raw car 3-vectors and their car-block places and coefficients.
_CAR_VECTORS = ((CAR_POS, C_POS, POS_COEF), (CAR_FWD, C_FWD, 1.0), (CAR_UP, C_UP, 1.0), (CAR_VEL, C_VEL, VEL_COEF),
                (CAR_ANG_VEL, C_ANG_VEL, ANG_VEL_COEF))
_CAR_SCALARS = ((CAR_BOOST, C_BOOST, BOOST_COEF), (CAR_ON_GROUND, C_ON_GROUND, 1.0), (CAR_DEMOED, C_DEMOED, 1.0))
_BALL_VECTORS = ((BALL_POS, POS_COEF), (BALL_VEL, VEL_COEF), (BALL_ANG_VEL, ANG_VEL_COEF))


@dataclass(frozen=True)
class _GatherPlan:
    """Where each observation value of one arena comes from, for one team layout (built once per layout).

    build_obs lays each arena's inputs out as one source row:

        ball (9) | cars (C x 18) | pads (34) | 1.0 | 0.0 | ball relative to each car, blue frame
        (C x 6) | the same, orange frame (C x 6) | score difference for blue, for orange |
        seconds-left value | overtime value

    and every observation value is one source value times a constant: the layout's coefficient
    with the sign of the 180-degree rotation folded in for orange observers. Negating x and y
    is exact in floating point, so this rounds exactly as mirroring first and scaling after
    does. The relative vectors are differences, so they are computed (in both frames, per car,
    not per observer) before the gather and taken with coefficient 1.
    """

    take: np.ndarray  # [C * OBS_DIM] source column of every output value
    scale: np.ndarray  # [C * OBS_DIM] its multiplier, in the inputs' dtype
    constants: np.ndarray  # [1, 2] the 1.0 and 0.0 columns


@functools.lru_cache(maxsize=32)
def _gather_plan(layout: tuple[int, ...], dtype: np.dtype) -> _GatherPlan:
    """The plan for one team layout, its multipliers in `dtype` (so they round as the Python
    floats in `array * COEF` do: to float32 for float32 inputs)."""
    n_cars = len(layout)
    table = _slot_table(np.array([layout]))
    cars_at = BALL_RAW_DIM
    pads_at = cars_at + n_cars * CAR_RAW_DIM
    one = pads_at + N_BOOST_PADS
    zero = one + 1
    rel_at = (zero + 1, zero + 1 + n_cars * _REL_DIM)  # blue frame, orange frame
    score_at = rel_at[1] + n_cars * _REL_DIM  # blue's difference, orange's
    seconds_at, overtime_at = score_at + 2, score_at + 3
    take = np.full(n_cars * OBS_DIM, zero, dtype=np.intp)  # empty slots read 0.0
    scale = np.ones(n_cars * OBS_DIM)
    for o, team in enumerate(layout):
        base = o * OBS_DIM
        flip = _MIRROR if team == 1 else np.ones(3)
        for part, coef in _BALL_VECTORS:
            at = base + LAYOUT["ball"].start + part.start
            take[at:at + 3] = np.arange(part.start, part.stop)
            scale[at:at + 3] = flip * coef
        for slot, car in zip(("self", "mate0", "mate1", "opp0", "opp1", "opp2"), table[o]):
            if car == n_cars:
                continue  # an empty slot: all zeros
            block = base + LAYOUT[slot].start
            src = cars_at + car * CAR_RAW_DIM
            take[block + C_PRESENT] = one
            for part, dest, coef in _CAR_VECTORS:
                take[block + dest.start:block + dest.stop] = src + np.arange(part.start, part.stop)
                scale[block + dest.start:block + dest.stop] = flip * coef
            for col, dest, coef in _CAR_SCALARS:
                take[block + dest], scale[block + dest] = src + col, coef
            rel = block + C_BALL_REL_POS.start  # C_BALL_REL_VEL follows it
            take[rel:rel + _REL_DIM] = rel_at[team] + car * _REL_DIM + np.arange(_REL_DIM)
        pads = base + LAYOUT["pads"].start
        order = np.arange(N_BOOST_PADS)[::-1] if team == 1 else np.arange(N_BOOST_PADS)
        take[pads:pads + N_BOOST_PADS] = pads_at + order
        game = base + LAYOUT["game"].start
        take[game + G_SCORE_DIFF] = score_at + team
        take[game + G_SECONDS_LEFT] = seconds_at
        take[game + G_OVERTIME] = overtime_at
    plan = _GatherPlan(take=take, scale=scale.astype(dtype), constants=np.array([[1.0, 0.0]], dtype=dtype))
    for array in (plan.take, plan.scale, plan.constants):
        array.flags.writeable = False
    return plan


def build_obs(
    ball: np.ndarray,
    cars: np.ndarray,
    teams: np.ndarray,
    pads: np.ndarray,
    score: np.ndarray,
    seconds_left: np.ndarray,
    overtime: np.ndarray,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Observations for every car of every arena, in one batched pass.

    ball [E, 9], cars [E, C, 18] (blue frame, car-id order; one dtype), teams [E, C] (0 blue,
    1 orange), pads [E, 34] (1.0 available, blue order), score [E, 2] (blue, orange goals),
    seconds_left [E], overtime [E]. Every arena holds the same C cars (C/2 per team).
    Returns [E * C, OBS_DIM] float32, row e * C + c for car c of arena e, written into `out`
    when given (a C-contiguous float32 array of that shape, e.g. the runner's shared memory).

    One source row per arena, one gather through a per-layout plan and one multiply (see
    _GatherPlan): a dozen array operations per batch, whatever E and C.
    """
    n_envs, n_cars, _ = cars.shape
    if not (teams == teams[0]).all():
        raise ValueError("build_obs needs the same team layout in every arena of a batch")
    dtype = np.result_type(ball, cars)
    plan = _gather_plan(tuple(teams[0].tolist()), dtype)
    if out is None:
        out = np.empty((n_envs * n_cars, OBS_DIM), dtype=np.float32)
    elif out.shape != (n_envs * n_cars, OBS_DIM) or out.dtype != np.float32 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float32 array of shape {(n_envs * n_cars, OBS_DIM)}, "
                         f"got {out.dtype} {out.shape}")

    # Ball minus car, position then velocity, scaled: in the blue frame, and mirrored first.
    ball_rel, car_rel = ball[:, None, _REL_BALL], np.take(cars, _REL_CAR, axis=2)
    coef, mirror = _REL_COEF.astype(dtype), _REL_MIRROR.astype(dtype)
    rel_blue = (ball_rel - car_rel) * coef
    rel_orange = (ball_rel * mirror - car_rel * mirror) * coef
    score_diff = np.clip(score - score[:, ::-1], -SCORE_DIFF_CLIP, SCORE_DIFF_CLIP) / SCORE_DIFF_CLIP  # blue's, orange's
    source = np.concatenate([
        ball, cars.reshape(n_envs, -1), pads, plan.constants.repeat(n_envs, axis=0),
        rel_blue.reshape(n_envs, -1), rel_orange.reshape(n_envs, -1), score_diff,
        (seconds_left * SECONDS_COEF)[:, None], overtime.astype(np.float32)[:, None],
    ], axis=1, dtype=dtype)

    flat = out.reshape(n_envs, n_cars * OBS_DIM)  # a view: `out` is contiguous
    # mode="clip" skips numpy's per-index bounds check (every plan index is in range).
    if dtype == np.float32:
        np.take(source, plan.take, axis=1, out=flat, mode="clip")
        np.multiply(flat, plan.scale, out=flat)
    else:  # multiply in the inputs' precision, then round to float32, as `array * COEF` stored in float32 does
        np.multiply(np.take(source, plan.take, axis=1, mode="clip"), plan.scale, out=flat)
    return out
