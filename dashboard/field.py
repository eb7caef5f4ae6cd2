"""The soccar field, to scale: its geometry for both replay views, as the browser reads it.

Geometry is in Unreal units (uu), the same frame as replay files: blue defends y < 0, orange
y > 0, z is up. The arena's values come from league/game_values.py (RocketSim's standard soccar
arena) and the pads' pickup radii from dashboard/boost_pads.py; only what the drawing alone needs
is defined here. The drawing itself runs in the browser (the 2D view's canvas code is
dashboard/field2d.js), because a replay player has to redraw 15-30 frames a second without a
round trip to the server.

On the canvas the field lies on its side: +y (towards orange) points right and +x points up,
which is the view from above in Rocket League's left-handed frame. Cars are drawn
`CAR_DRAW_SCALE` times their hitbox size and the ball at least `MIN_BALL_PX` pixels wide so they
stay visible on a laptop screen; everything else is to scale.
"""

from __future__ import annotations

from league.game_values import (
    BACK_NET_Y,
    BACK_WALL_Y,
    BALL_RADIUS,
    BIG_PAD_Z,
    CEILING_Z,
    CORNER_CUT,
    GOAL_HALF_WIDTH,
    GOAL_HEIGHT,
    SIDE_WALL_X,
)
from league.game_values import BOOST_PADS as PAD_POSITIONS
from dashboard.boost_pads import BIG_PAD_RADIUS, SMALL_PAD_RADIUS

GOAL_DEPTH = BACK_NET_Y - BACK_WALL_Y  # 880 uu of net behind each goal line
CAR_LENGTH = 118.01  # Octane hitbox
CAR_WIDTH = 84.2
CAR_HEIGHT = 36.16
CAR_HITBOX_OFFSET = (13.88, 0.0, 20.75)  # hitbox centre from the car's origin, in the car's frame
CENTER_CIRCLE_RADIUS = 1000.0  # kickoff circle as painted on the floor (approximate)
CAR_DRAW_SCALE = 1.6
MIN_BALL_PX = 6

# The 34 boost pads as drawn: (x, y, big).
BOOST_PADS: tuple[tuple[float, float, bool], ...] = tuple((x, y, z == BIG_PAD_Z) for x, y, z in PAD_POSITIONS)

TEAM_COLORS = ("#2f7df6", "#ff8a1e")  # blue, orange
TEAM_NAMES = ("blue", "orange")


def field_outline() -> list[tuple[float, float]]:
    """The walls at floor level as a closed octagon of (x, y) corners, clockwise from blue's left."""
    x, y, c = SIDE_WALL_X, BACK_WALL_Y, CORNER_CUT
    return [(-x, -y + c), (-x, y - c), (-x + c, y), (x - c, y), (x, y - c), (x, -y + c), (x - c, -y), (-x + c, -y)]


def goal_boxes() -> list[dict[str, float]]:
    """Each goal's mouth and net as a rectangle in (x, y): blue's first."""
    return [
        {"team": team, "x0": -GOAL_HALF_WIDTH, "x1": GOAL_HALF_WIDTH,
         "y0": sign * BACK_WALL_Y, "y1": sign * (BACK_WALL_Y + GOAL_DEPTH)}
        for team, sign in ((0, -1.0), (1, 1.0))
    ]


def geometry() -> dict:
    """Everything the browser needs to draw the empty field, as plain JSON-able values."""
    return {
        "outline": field_outline(),
        "goals": goal_boxes(),
        "pads": [list(p) for p in BOOST_PADS],
        "bigPadRadius": BIG_PAD_RADIUS,
        "smallPadRadius": SMALL_PAD_RADIUS,
        "centerCircle": CENTER_CIRCLE_RADIUS,
        "halfX": SIDE_WALL_X,
        "halfY": BACK_WALL_Y + GOAL_DEPTH,
        "ballRadius": BALL_RADIUS,
        "carLength": CAR_LENGTH * CAR_DRAW_SCALE,
        "carWidth": CAR_WIDTH * CAR_DRAW_SCALE,
        "minBallPx": MIN_BALL_PX,
        "ceiling": CEILING_Z,
        "teamColors": list(TEAM_COLORS),
        # the 3D view's extras (the 2D view's car sizes above are scaled up to stay visible)
        "sideWallX": SIDE_WALL_X,
        "backWallY": BACK_WALL_Y,
        "cornerCut": CORNER_CUT,
        "goalHalfWidth": GOAL_HALF_WIDTH,
        "goalHeight": GOAL_HEIGHT,
        "goalDepth": GOAL_DEPTH,
        "padZ": [z for _, _, z in PAD_POSITIONS],
        "carHitbox": [CAR_LENGTH, CAR_WIDTH, CAR_HEIGHT],
        "carHitboxOffset": list(CAR_HITBOX_OFFSET),
    }
