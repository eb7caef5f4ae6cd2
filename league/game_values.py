"""Soccar's constants, defined once for every layer (RLGym's `rocket_league.common_values` is the model).

Lengths are in Unreal units (uu, 1 uu = 1 cm), in the blue frame: blue defends y < 0, orange
y > 0, z is up. Values are RocketSim's standard soccar arena, the one every league game is
played in. This module imports nothing, so the league core, agents, the arena, training and
the dashboard all read it. The one exception is the standalone RLBot bot (agents/rlbot_bot/),
which cannot import the league and keeps copies; tests/test_game_values.py checks them.
"""

from __future__ import annotations

# Field.
SIDE_WALL_X = 4096.0  # +/-
BACK_WALL_Y = 5120.0  # +/-: the goal lines
BACK_NET_Y = 6000.0  # +/-: the back of each net
CEILING_Z = 2044.0
CORNER_CUT = 1152.0  # length of each leg of the 45-degree corner cut
GOAL_HALF_WIDTH = 892.755  # goal centre to post
GOAL_HEIGHT = 642.775
GOAL_CENTER_Z = 321.0  # the height aimed at in a goal: half its height, rounded down
GOAL_THRESHOLD = 5215.5  # |y| of the ball's centre beyond which it is in a goal

# Ball.
BALL_RADIUS = 91.25
BALL_RESTING_HEIGHT = 93.15

# Speeds (uu/s).
CAR_MAX_SPEED = 2300.0
BALL_MAX_SPEED = 6000.0
SUPERSONIC_SPEED = 2200.0

# Time.
TICKS_PER_SECOND = 120  # physics ticks per second of game clock

# Boost pads (x, y, z) in RocketSim's order, the order of the observation's pad block. The list
# is point-symmetric: pad 33 - i is pad i turned 180 degrees about z, which is why an orange
# observer, who sees the field so turned, reads it reversed. So the blue half is written out
# and the orange half derived. Big pads stand at z = 73, small ones at z = 70.
BIG_PAD_Z = 73.0
_BLUE_HALF_PADS = (
    (0.0, -4240.0, 70.0), (-1792.0, -4184.0, 70.0), (1792.0, -4184.0, 70.0),
    (-3072.0, -4096.0, 73.0), (3072.0, -4096.0, 73.0),
    (-940.0, -3308.0, 70.0), (940.0, -3308.0, 70.0), (0.0, -2816.0, 70.0),
    (-3584.0, -2484.0, 70.0), (3584.0, -2484.0, 70.0),
    (-1788.0, -2300.0, 70.0), (1788.0, -2300.0, 70.0),
    (-2048.0, -1036.0, 70.0), (0.0, -1024.0, 70.0), (2048.0, -1036.0, 70.0),
    (-3584.0, 0.0, 73.0), (-1024.0, 0.0, 70.0),
)
BOOST_PADS: tuple[tuple[float, float, float], ...] = _BLUE_HALF_PADS + tuple(
    (-x if x else 0.0, -y if y else 0.0, z) for x, y, z in reversed(_BLUE_HALF_PADS)  # 0.0, never -0.0
)
BIG_PADS: tuple[int, ...] = tuple(i for i, (_, _, z) in enumerate(BOOST_PADS) if z == BIG_PAD_Z)
