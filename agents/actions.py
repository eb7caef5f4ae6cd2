"""The action table every agent speaks (documented in docs/contract.md).

An action is an index into the community-standard 90-entry lookup table over
(throttle, steer, pitch, yaw, roll, jump, boost, handbrake), the same table as RLGym's
`LookupTableAction` and rlgym-ppo. The game repeats each chosen action for `tick_skip`
physics ticks (120 Hz; default 8).
"""

from __future__ import annotations

import numpy as np

ACTION_TABLE_VERSION = 1
CONTROLS = ("throttle", "steer", "pitch", "yaw", "roll", "jump", "boost", "handbrake")


def make_action_table() -> np.ndarray:
    """The 90 x 8 float32 table: ground actions first, then aerial ones."""
    actions = []
    for throttle in (-1, 0, 1):
        for steer in (-1, 0, 1):
            for boost in (0, 1):
                for handbrake in (0, 1):
                    if boost == 1 and throttle != 1:
                        continue
                    actions.append([throttle or boost, steer, 0, steer, 0, 0, boost, handbrake])
    for pitch in (-1, 0, 1):
        for yaw in (-1, 0, 1):
            for roll in (-1, 0, 1):
                for jump in (0, 1):
                    for boost in (0, 1):
                        if jump == 1 and yaw != 0:  # sideflips only need roll
                            continue
                        if pitch == roll == jump == 0:  # already a ground action
                            continue
                        handbrake = jump == 1 and (pitch != 0 or yaw != 0 or roll != 0)  # allows wavedashes
                        actions.append([boost, yaw, pitch, yaw, roll, jump, boost, handbrake])
    return np.asarray(actions, dtype=np.float32)


ACTION_TABLE = make_action_table()
N_ACTIONS = len(ACTION_TABLE)  # 90
assert N_ACTIONS == 90


def find_action(**controls: float) -> int:
    """Index of the first table entry matching the given controls, e.g. find_action(throttle=1, boost=1)."""
    mask = np.ones(N_ACTIONS, dtype=bool)
    for name, value in controls.items():
        mask &= ACTION_TABLE[:, CONTROLS.index(name)] == value
    hits = np.flatnonzero(mask)
    if len(hits) == 0:
        raise ValueError(f"no action in the table matches {controls}")
    return int(hits[0])


def nearest_actions(controls: np.ndarray) -> np.ndarray:
    """[N] the row of ACTION_TABLE nearest to each of `controls` [N, 8] (squared distance over the eight
    controls; ties to the first row): how an agent speaking raw controls, such as a community bot
    teaching the learner, is matched to the table the learner speaks."""
    diff = np.asarray(controls, dtype=np.float32)[:, None, :] - ACTION_TABLE[None, :, :]
    return np.einsum("nak,nak->na", diff, diff).argmin(axis=1).astype(np.int64)
