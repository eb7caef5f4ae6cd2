"""RLGym GameState <-> RocketSim arena, without RLGym's per-tick engine.

Start states are described the RLGym way (StateMutators edit a GameState) and written into a
runner's existing arena in place: cars keep their ids, so the runner's car order never changes.
`read_state` goes the other way through RocketSim's per-object API (Car.get_state, BoostPad
.get_state), the same route RLGym's RocketSimEngine takes; it is deliberately independent of
the batched get_gym_state path, so tests can compare the two, and it serves the slow adapters
that let plain RLGym rewards and done conditions run inside the game runner.
"""

from __future__ import annotations

import numpy as np
import RocketSim as rsim
from rlgym.rocket_league.api import Car, GameConfig, GameState, PhysicsObject

from agents.obs import N_BOOST_PADS
from league.game_values import GOAL_THRESHOLD


def agent_ids(team_size: int) -> list[str]:
    """RLGym agent ids in car order, named as RLGym's FixedTeamSizeMutator names them."""
    return [f"blue-{i}" for i in range(team_size)] + [f"orange-{i}" for i in range(team_size)]


def base_state(tick_count: int = 0) -> GameState:
    """An empty soccar GameState (no cars yet), as RocketSimEngine.create_base_state makes it."""
    state = GameState()
    state.tick_count = tick_count
    state.goal_scored = False
    state.config = GameConfig()
    state.config.gravity = 1
    state.config.boost_consumption = 1
    state.config.dodge_deadzone = 0.5
    state.ball = PhysicsObject()
    state.cars = {}
    state.boost_pad_timers = np.zeros(N_BOOST_PADS, dtype=np.float32)
    return state


def _vec(values) -> rsim.Vec:
    return rsim.Vec(*(float(v) for v in values))


def _rot(rotation_mtx: np.ndarray) -> rsim.RotMat:
    # RLGym keeps forward/right/up as columns; RocketSim's RotMat takes them as rows.
    return rsim.RotMat(*(float(v) for v in np.asarray(rotation_mtx).T.ravel()))


def _write_ball(arena: rsim.Arena, ball: PhysicsObject) -> None:
    state = rsim.BallState()
    state.pos = _vec(ball.position)
    state.vel = _vec(ball.linear_velocity)
    state.ang_vel = _vec(ball.angular_velocity)
    try:
        state.rot_mat = _rot(ball.rotation_mtx)
    except ValueError:  # mutators usually leave the ball's rotation unset
        pass
    arena.ball.set_state(state)


def _write_car(car: rsim.Car, desired: Car) -> None:
    state = rsim.CarState()
    state.pos = _vec(desired.physics.position)
    state.vel = _vec(desired.physics.linear_velocity)
    state.ang_vel = _vec(desired.physics.angular_velocity)
    state.rot_mat = _rot(desired.physics.rotation_mtx)
    state.demo_respawn_timer = float(desired.demo_respawn_timer)
    state.is_demoed = bool(desired.is_demoed)
    state.wheels_with_contact = tuple(bool(w) for w in desired.wheels_with_contact)
    state.is_on_ground = bool(desired.on_ground)
    state.supersonic_time = float(desired.supersonic_time)
    state.boost = float(desired.boost_amount)
    state.time_spent_boosting = float(desired.boost_active_time)
    state.handbrake_val = float(desired.handbrake)
    state.has_jumped = bool(desired.has_jumped)
    state.is_jumping = bool(desired.is_jumping)
    state.jump_time = float(desired.jump_time)
    state.has_flipped = bool(desired.has_flipped)
    state.is_flipping = bool(desired.is_flipping)
    state.has_double_jumped = bool(desired.has_double_jumped)
    state.air_time_since_jump = float(desired.air_time_since_jump)
    state.flip_time = float(desired.flip_time)
    state.flip_rel_torque = _vec(desired.flip_torque)
    state.is_auto_flipping = bool(desired.is_autoflipping)
    state.auto_flip_timer = float(desired.autoflip_timer)
    state.auto_flip_torque_scale = float(desired.autoflip_direction)
    controls = rsim.CarControls()
    controls.jump = bool(desired.is_holding_jump)
    state.last_controls = controls
    car.set_state(state)
    # A fresh start state should not inherit the previous episode's inputs.
    car.set_controls(rsim.CarControls())


def write_state(arena: rsim.Arena, cars: list[rsim.Car], ids: list[str], state: GameState) -> None:
    """Put `state` into an existing arena in place; `cars[i]` plays the agent `ids[i]`.

    The state's cars must be exactly `ids` (the runner never adds or removes cars). The state's
    GameConfig (gravity, boost consumption) is not applied: runner arenas play standard soccar.
    """
    if set(state.cars) != set(ids):
        raise ValueError(f"start state has cars {sorted(state.cars)} but the arena plays {ids}")
    _write_ball(arena, state.ball)
    for car, agent in zip(cars, ids):
        _write_car(car, state.cars[agent])
    for pad, timer in zip(arena.get_boost_pads(), np.asarray(state.boost_pad_timers).tolist()):
        pad_state = rsim.BoostPadState()
        pad_state.cooldown = float(timer)
        pad_state.is_active = timer <= 0
        pad.set_state(pad_state)


def _physics(pos, vel, ang_vel, rot_mat) -> PhysicsObject:
    physics = PhysicsObject()
    physics.position = pos.as_numpy()
    physics.linear_velocity = vel.as_numpy()
    physics.angular_velocity = ang_vel.as_numpy()
    physics.rotation_mtx = np.ascontiguousarray(rot_mat.as_numpy().reshape(3, 3).T)
    return physics


def _read_car(rs_car: rsim.Car, touches: int) -> Car:
    s = rs_car.get_state()
    car = Car()
    car.team_num = int(rs_car.team)
    car.hitbox_type = 0  # Octane: the runner only builds Octanes
    car.physics = _physics(s.pos, s.vel, s.ang_vel, s.rot_mat)
    car.demo_respawn_timer = s.demo_respawn_timer
    car.wheels_with_contact = s.wheels_with_contact
    car.supersonic_time = s.supersonic_time
    car.boost_amount = s.boost
    car.boost_active_time = s.time_spent_boosting
    car.handbrake = s.handbrake_val
    car.has_jumped = s.has_jumped
    car.is_holding_jump = s.last_controls.jump
    car.is_jumping = s.is_jumping
    car.jump_time = s.jump_time
    car.has_flipped = s.has_flipped
    car.has_double_jumped = s.has_double_jumped
    car.air_time_since_jump = s.air_time_since_jump
    car.flip_time = s.flip_time
    car.flip_torque = s.flip_rel_torque.as_numpy()
    car.is_autoflipping = s.is_auto_flipping
    car.autoflip_timer = s.auto_flip_timer
    car.autoflip_direction = s.auto_flip_torque_scale
    car.bump_victim_id = None
    car.ball_touches = int(touches)
    return car


def read_state(
    arena: rsim.Arena,
    cars: list[rsim.Car],
    ids: list[str],
    tick_count: int,
    touches: np.ndarray | None = None,
) -> GameState:
    """The arena as an RLGym GameState, read object by object (slow; not for the hot path).

    `touches[i]` is the number of ball touches of `cars[i]` since the last read.
    """
    state = base_state(tick_count)
    ball = arena.ball.get_state()
    state.ball = _physics(ball.pos, ball.vel, ball.ang_vel, ball.rot_mat)
    # As RocketSimEngine decides it: the ball is wholly past a goal line.
    state.goal_scored = bool(abs(state.ball.position[1]) > GOAL_THRESHOLD)
    counts = np.zeros(len(cars), dtype=np.int64) if touches is None else touches
    state.cars = {agent: _read_car(car, n) for agent, car, n in zip(ids, cars, counts)}
    # Arena pad order is RLGym's BOOST_LOCATIONS order (tests/test_obs_equivalence.py checks it).
    state.boost_pad_timers = np.array([pad.get_state().cooldown for pad in arena.get_boost_pads()], dtype=np.float32)
    return state
