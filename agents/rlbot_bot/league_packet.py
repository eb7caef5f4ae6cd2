"""An RLBot v5 GamePacket as the raw arrays the league's build_obs takes (league_obs.build_obs).

In the league, RocketSim hands the game layer (arena/engine/gym_state.py) per arena:

    ball  [9]      position, linear velocity, angular velocity
    cars  [C, 18]  position, forward, up, linear velocity, angular velocity, boost (0-100),
                   on ground, demolished; in the blue frame, in car order
    teams [C]      0 blue, 1 orange
    pads  [34]     1.0 where a boost pad is available, in RocketSim's pad order
    score [2]      goals of blue and orange; seconds left on the clock; overtime flag

Here the same arrays come from the packet. What cannot be read exactly is listed in the bot's
README.md ("What is approximated"); each place is marked APPROX below.
"""

from __future__ import annotations

import math

import numpy as np

from league_obs import CAR_RAW_DIM, N_BOOST_PADS

F32 = np.float32
# RLBot's flatbuffer enums, as ints (rlbot.flat.AirState / MatchPhase).
AIR_ON_GROUND = 0
PHASE_INACTIVE, PHASE_COUNTDOWN, PHASE_KICKOFF, PHASE_ACTIVE = 0, 1, 2, 3
PHASE_GOAL_SCORED, PHASE_REPLAY, PHASE_PAUSED, PHASE_ENDED = 4, 5, 6, 7
FULL_CLOCK_SECONDS = 300.0  # what the clock shows in a game of unlimited time (APPROX)

# Boost pad positions (x, y, z) in RocketSim's order, the order of the league's pad block.
# RLBot's FieldInfo lists the same pads sorted by y then x (a different order around y = +-1030),
# so pads are matched by position.
LEAGUE_PAD_POSITIONS = np.array([
    (0, -4240, 70), (-1792, -4184, 70), (1792, -4184, 70), (-3072, -4096, 73), (3072, -4096, 73),
    (-940, -3308, 70), (940, -3308, 70), (0, -2816, 70), (-3584, -2484, 70), (3584, -2484, 70),
    (-1788, -2300, 70), (1788, -2300, 70), (-2048, -1036, 70), (0, -1024, 70), (2048, -1036, 70),
    (-3584, 0, 73), (-1024, 0, 70), (1024, 0, 70), (3584, 0, 73), (-2048, 1036, 70),
    (0, 1024, 70), (2048, 1036, 70), (-1788, 2300, 70), (1788, 2300, 70), (-3584, 2484, 70),
    (3584, 2484, 70), (0, 2816, 70), (-940, 3308, 70), (940, 3308, 70), (-3072, 4096, 73),
    (3072, 4096, 73), (-1792, 4184, 70), (1792, 4184, 70), (0, 4240, 70),
], dtype=np.float64)
PAD_MATCH_TOLERANCE = 100.0  # uu; neighbouring pads are at least 800 uu apart
assert len(LEAGUE_PAD_POSITIONS) == N_BOOST_PADS


def pad_order(field_info) -> np.ndarray:
    """For each league pad (RocketSim order), its index in the packet's boost pad list.

    Refuses a field whose pads are not the standard soccar layout: the league trains on no other.
    """
    pads = list(field_info.boost_pads)
    if len(pads) != N_BOOST_PADS:
        raise ValueError(f"this bot plays standard soccar maps with {N_BOOST_PADS} boost pads; "
                         f"the field has {len(pads)}")
    where = np.array([[p.location.x, p.location.y] for p in pads], dtype=np.float64)
    distance = np.linalg.norm(LEAGUE_PAD_POSITIONS[:, None, :2] - where[None, :, :], axis=-1)
    order = distance.argmin(axis=1)
    if len(set(order.tolist())) != N_BOOST_PADS or distance[np.arange(N_BOOST_PADS), order].max() > PAD_MATCH_TOLERANCE:
        raise ValueError("the field's boost pads are not where standard soccar has them")
    return order


def forward_up(pitch: float, yaw: float, roll: float) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """The car's forward and up unit vectors from RLBot's Euler angles (radians).

    The rotation matrix of Rocket League's rotator (yaw about z, pitch about the new y, roll
    about the new x), as RocketSim's Angle and rlgym-compat build it: forward is its first
    column, up its third. APPROX: the game's angles are rounded (see README.md).
    """
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    cr, sr = math.cos(roll), math.sin(roll)
    forward = (cp * cy, cp * sy, sp)
    up = (-cr * cy * sp - sr * sy, -cr * sy * sp + sr * cy, cp * cr)
    return forward, up


def is_demolished(player) -> bool:
    """RLBot reports -1 while a car is not demolished, else the seconds until it respawns."""
    return player.demolished_timeout > 0


def raw_cars(packet) -> tuple[np.ndarray, np.ndarray]:
    """Cars [C, 18] (blue frame, packet order) and teams [C] from the packet's players."""
    players = packet.players
    cars = np.zeros((len(players), CAR_RAW_DIM), dtype=F32)
    teams = np.zeros(len(players), dtype=np.int8)
    for k, player in enumerate(players):
        physics = player.physics
        loc, vel, ang, rot = physics.location, physics.velocity, physics.angular_velocity, physics.rotation
        forward, up = forward_up(rot.pitch, rot.yaw, rot.roll)
        # APPROX: on ground is RLBot's air state "OnGround"; RocketSim's is "3+ wheels in contact".
        # APPROX: a demolished car's physics are what the packet reports (RocketSim keeps the
        # car where it died, or at its respawn spot).
        cars[k] = (loc.x, loc.y, loc.z, *forward, *up, vel.x, vel.y, vel.z, ang.x, ang.y, ang.z,
                   player.boost, float(int(player.air_state) == AIR_ON_GROUND), float(is_demolished(player)))
        teams[k] = 1 if player.team == 1 else 0
    return cars, teams


def raw_ball(packet) -> np.ndarray:
    """Ball [9]: position, velocity, angular velocity of the packet's first ball."""
    physics = packet.balls[0].physics
    loc, vel, ang = physics.location, physics.velocity, physics.angular_velocity
    return np.array([loc.x, loc.y, loc.z, vel.x, vel.y, vel.z, ang.x, ang.y, ang.z], dtype=F32)


def raw_pads(packet, order: np.ndarray) -> np.ndarray:
    """Pads [34] in the league's order: 1.0 where the pad can be picked up now."""
    states = packet.boost_pads
    return np.array([1.0 if states[j].is_active else 0.0 for j in order.tolist()], dtype=F32)


def raw_game(packet) -> tuple[np.ndarray, float, bool]:
    """Score [blue, orange], seconds left on the clock, overtime.

    The league's timed games count the clock down from the game length and keep the score
    across goals, as the match clock and scoreboard do. In overtime the clock has nothing
    left (RLBot counts overtime up). APPROX: unlimited time shows a full clock.
    """
    score = np.zeros(2, dtype=np.int64)
    for team in packet.teams:
        if team.team_index in (0, 1):
            score[team.team_index] = team.score
    info = packet.match_info
    if info.is_overtime:
        return score, 0.0, True
    if info.is_unlimited_time:
        return score, FULL_CLOCK_SECONDS, False
    return score, max(float(info.game_time_remaining), 0.0), False
