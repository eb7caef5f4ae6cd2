"""What a teacher says about each state its student sees: its whole action distribution, in the
student's action space (agents.action_spaces).

    space = teacher_space(policy)                       # the space the teacher speaks
    check_can_teach(policy, name, student_space)        # one sentence if the student cannot hold it
    labels, state = teacher_labels(policy, game, obs, rows, state, starts, student_space,
                                   label_dtype(policy, cpu_has_bf16_units()))  # bf16 where it pays and agrees

A community bot reads the game and answers each head's probabilities (Necto's five, Element's
eight); a league network answers its own softmax; a scripted bot (rule, rule-pro, ...) answers its
greedy action, one-hot in the table. A student speaking the teacher's space takes the labels as
they are; a student speaking the table takes the teacher's joint distribution with each joint
action's mass moved to the nearest table row.
"""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from agents.action_spaces import SPACES, TABLE, ActionSpace, can_hold, one_hot, project
from agents.actions import nearest_actions
from agents.game_state import GameArrays
from agents.policy import Policy, State
from league.errors import LeagueError


def teacher_space(policy: Policy) -> ActionSpace:
    """The action space `policy`'s labels come in: its own heads, or the table."""
    return getattr(policy, "space", None) or SPACES[TABLE]


def can_teach(policy: Policy, student: ActionSpace) -> bool:
    """Whether a student speaking `student` can hold what `policy` says."""
    return can_hold(student, teacher_space(policy))


def check_can_teach(policy: Policy, name: str, student: ActionSpace, existing: str | None = None) -> None:
    """One sentence when a student speaking `student` cannot hold what `policy` (named `name`) says.
    `existing`: the agent whose network the student is (a resumed or forked run), which keeps its space."""
    if can_teach(policy, student):
        return
    space = teacher_space(policy)
    if existing is not None:
        raise LeagueError(
            f"{name} cannot teach {existing}: its network speaks {student.doc}, which cannot hold {name}'s actions "
            f"({space.doc}), and a network keeps its action space; choose a teacher that speaks {student.name}, "
            f"or copy {name} into a new student (league train --distill {name}).")
    alternative = f"policy.action_space={space.name}" + ("" if space.name == TABLE else ", or table (the teacher's "
                                                         "distribution moved to the nearest rows of the 90-row table)")
    raise LeagueError(
        f"A student speaking {student.name} (policy.action_space={student.name}) cannot hold {name}'s actions, "
        f"which are {space.doc}; give the student {alternative}.")


def label_dtype(policy: Policy, bf16_units: bool) -> torch.dtype | None:
    """The reduced type `policy`'s labels are computed in on a CPU (None: float32): bfloat16 where the CPU
    multiplies bf16 in hardware (`bf16_units`: training.accel.cpu_has_bf16_units) and the teacher was measured
    to agree with its float32 labels in it (a `reduced_label_dtype` on the policy or its community adapter).
    A CPU without those units emulates bf16, slower than float32, so it labels in float32."""
    if not bf16_units:
        return None
    return getattr(getattr(policy, "adapter", policy), "reduced_label_dtype", None)


def teacher_labels(policy: Policy, game: GameArrays | None, obs: np.ndarray, rows: np.ndarray, state: State,
                   starts: np.ndarray, student: ActionSpace,
                   dtype: torch.dtype | None = None) -> tuple[np.ndarray, State]:
    """[R, student.logits] float32: the teacher's distribution over each head for every row, and its
    new state (`game` and `rows` for a teacher that reads the game; `obs` [R, D] otherwise).
    `dtype`: the teacher's CPU forward under autocast to it (label_dtype), else in float32."""
    with torch.autocast("cpu", dtype=dtype) if dtype is not None else contextlib.nullcontext():
        if policy.reads_game:
            probs, state = policy.act_game_probs(game, rows, state, starts)
        elif hasattr(policy, "probs"):
            probs, state = policy.probs(obs, state, starts)
        else:
            actions, state = policy.act(obs, state, starts, deterministic=True)
            probs = one_hot(nearest_actions(actions) if policy.speaks_controls else actions, SPACES[TABLE])
    return project(np.asarray(probs), teacher_space(policy), student), state
