"""The runner's arrays, laid out in one block of (optionally shared) memory.

Workers write observations, rewards, done flags and per-step info straight into these arrays
and the main process reads them as numpy views, so a step moves no array through a pipe. The
block is one `multiprocessing.RawArray` for game worker processes (handed to each worker
when it starts) or plain memory for the in-process placement; both are viewed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.game_state import CAR_STATE_DIM, N_CONTROLS
from agents.obs import BALL_RAW_DIM, N_BOOST_PADS, OBS_DIM

ALIGN = 64  # bytes; keeps every array on its own cache line


@dataclass(frozen=True)
class ArraySpec:
    shape: tuple[int, ...]
    dtype: str


def runner_layout(n_envs: int, n_cars: int, game_state: bool = False) -> dict[str, ArraySpec]:
    """Every shared array of a runner with `n_envs` arenas of `n_cars` cars (N = n_envs * n_cars rows).

    Per row (one car of one arena, row e * n_cars + c):
      obs, final_obs (the last observation of an episode that just ended), actions, rewards,
      terminated, truncated, episode_start (obs begins a new episode); controls and
      use_controls (a row whose agent speaks raw controls: they replace its action's row).
    With `game_state` (an agent reads the game itself; agents.game_state.GameArrays):
      state_ball [E, 9], state_cars [E, C, 19], state_pads [E, 34] and prev_controls [N, 8].
    Per arena:
      done, goals (this step, blue/orange), touches (per car, this step), score and
      seconds_left (of the game the obs shows, after any reset), episode_score and
      episode_seconds (of the episode as it stood at the end of the step, before any reset).
    """
    n = n_envs * n_cars
    state = {
        "state_ball": ArraySpec((n_envs, BALL_RAW_DIM), "float32"),
        "state_cars": ArraySpec((n_envs, n_cars, CAR_STATE_DIM), "float32"),
        "state_pads": ArraySpec((n_envs, N_BOOST_PADS), "float32"),
        "prev_controls": ArraySpec((n, N_CONTROLS), "float32"),
    } if game_state else {}
    return state | {
        "obs": ArraySpec((n, OBS_DIM), "float32"),
        "final_obs": ArraySpec((n, OBS_DIM), "float32"),
        "actions": ArraySpec((n,), "int64"),
        "controls": ArraySpec((n, N_CONTROLS), "float32"),
        "use_controls": ArraySpec((n,), "bool"),
        "rewards": ArraySpec((n,), "float32"),
        "terminated": ArraySpec((n,), "bool"),
        "truncated": ArraySpec((n,), "bool"),
        "episode_start": ArraySpec((n,), "bool"),
        "done": ArraySpec((n_envs,), "bool"),
        "goals": ArraySpec((n_envs, 2), "int32"),
        "touches": ArraySpec((n_envs, n_cars), "int32"),
        "score": ArraySpec((n_envs, 2), "int32"),
        "seconds_left": ArraySpec((n_envs,), "float32"),
        "episode_score": ArraySpec((n_envs, 2), "int32"),
        "episode_seconds": ArraySpec((n_envs,), "float32"),
    }


def _offsets(layout: dict[str, ArraySpec]) -> tuple[dict[str, int], int]:
    offsets, at = {}, 0
    for name, spec in layout.items():
        offsets[name] = at
        nbytes = int(np.prod(spec.shape)) * np.dtype(spec.dtype).itemsize
        at += -(-nbytes // ALIGN) * ALIGN
    return offsets, at


def nbytes_of(layout: dict[str, ArraySpec]) -> int:
    return _offsets(layout)[1]


def views(buffer, layout: dict[str, ArraySpec]) -> dict[str, np.ndarray]:
    """Numpy views of every array of `layout` inside `buffer` (anything exposing the buffer protocol)."""
    offsets, total = _offsets(layout)
    base = np.frombuffer(buffer, dtype=np.uint8, count=total)
    out = {}
    for name, spec in layout.items():
        dtype = np.dtype(spec.dtype)
        count = int(np.prod(spec.shape))
        out[name] = base[offsets[name]:offsets[name] + count * dtype.itemsize].view(dtype).reshape(spec.shape)
    return out


def allocate_local(layout: dict[str, ArraySpec]) -> np.ndarray:
    """Plain process memory for the in-process placement."""
    return np.zeros(nbytes_of(layout), dtype=np.uint8)


def allocate_shared(ctx, layout: dict[str, ArraySpec]):
    """A RawArray that worker processes started from `ctx` can map."""
    return ctx.RawArray("b", nbytes_of(layout))
