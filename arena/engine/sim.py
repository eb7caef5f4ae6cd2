"""RocketSim in one corner: initialisation, arena construction, and controls from the action table.

RocketSim needs the soccar collision meshes before the first arena is built; rlgym ships them,
so we point RocketSim at rlgym's copy (as rlgym's own RocketSimEngine does) and no game install
is needed. Everything else in arena/ that touches RocketSim objects goes through here or
through arena.engine.gym_state / arena.engine.rlgym_state.
"""

from __future__ import annotations

import os

import numpy as np
import RocketSim as rsim

from agents.actions import ACTION_TABLE

BLUE, ORANGE = 0, 1


def collision_mesh_dir() -> str:
    """The soccar collision meshes shipped inside the rlgym package."""
    import rlgym.rocket_league.sim as rlgym_sim

    return os.path.join(os.path.dirname(rlgym_sim.__file__), "collision_meshes")


def init_rocketsim() -> None:
    """Load the collision meshes once per process (RocketSim refuses a second init)."""
    try:
        rsim.init(collision_mesh_dir())
    except RuntimeError as exc:
        if "Already inited" not in str(exc):
            raise


def team_layout(team_size: int) -> np.ndarray:
    """Team of each car in car-id order: blue cars first, then orange ([2 * team_size] int8)."""
    return np.repeat(np.array([BLUE, ORANGE], dtype=np.int8), team_size)


def new_arena(team_size: int) -> tuple[rsim.Arena, list[rsim.Car]]:
    """A soccar arena with `team_size` Octanes per team, cars in id order (blue first)."""
    init_rocketsim()
    arena = rsim.Arena(rsim.GameMode.SOCCAR)
    cars = [arena.add_car(int(team)) for team in team_layout(team_size)]
    return arena, cars


def _controls(row: np.ndarray) -> rsim.CarControls:
    controls = rsim.CarControls()
    controls.throttle, controls.steer, controls.pitch, controls.yaw, controls.roll = (float(v) for v in row[:5])
    controls.jump, controls.boost, controls.handbrake = (bool(v) for v in row[5:8])
    return controls


def controls_table() -> list[rsim.CarControls]:
    """One prebuilt CarControls per action index.

    Car.set_controls copies the struct, so the hot path hands RocketSim a ready object per car
    instead of building one and setting eight attributes every step.
    """
    return [_controls(row) for row in ACTION_TABLE]


def apply_actions(cars: list[rsim.Car], actions: list[int], table: list[rsim.CarControls]) -> None:
    """Set each car's controls from its action index (cars and actions in the same order)."""
    for car, action in zip(cars, actions):
        car.set_controls(table[action])


def apply_controls(cars: list[rsim.Car], rows: np.ndarray, controls: np.ndarray) -> None:
    """Set the controls of cars[rows[i]] from raw controls [len(rows), 8] (agents speaking controls)."""
    for row, values in zip(rows.tolist(), controls):
        cars[row].set_controls(_controls(values))
