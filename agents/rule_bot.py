"""`rule`: a scripted soccar bot that works from the observation vector alone.

Every observation is in the observer's own-team frame (attacking +y, own goal at -y), so one
code path plays blue and orange. The bot is vectorised over the batch: each decision is a
boolean mask over rows, and the chosen controls become table indices through lookup arrays
built once from agents.actions. Per row:

- attack: drive to a point behind the (slightly predicted) ball on the line from the
  opponent's goal through it, the offset shrinking as the car closes in, so the car arrives
  behind the ball facing the goal and pushes it there;
- defend: unless the car is clearly goal-side of the ball (so whenever the ball is between
  it and its own goal), go back goal-side, passing the ball wide on the car's own side
  rather than through it;
- kickoff (ball resting on the centre spot): full boost at a point just behind the ball,
  front-flip into it;
- boost when far from the target and facing it; powerslide on sharp turns;
- close to the ball and facing it: jump, release, then front-flip into a low ball, or jump
  and hold into a bouncing one. The jump phase is read from the car's height and vertical
  speed, so the bot needs no memory of its own previous action;
- turtled: press jump now and then (the game's auto-flip needs a fresh press).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from agents.actions import find_action
from agents.obs import (
    BALL_POS,
    BALL_VEL,
    C_BOOST,
    C_FWD,
    C_ON_GROUND,
    C_POS,
    C_UP,
    C_VEL,
    LAYOUT,
    POS_COEF,
    VEL_COEF,
)
from agents.policy import Policy, State
from league.game_values import BACK_WALL_Y, SUPERSONIC_SPEED

# Field geometry in unreal units (uu), in the own-team frame.
OPP_GOAL_Y = BACK_WALL_Y
OWN_GOAL_Y = -BACK_WALL_Y
FIELD_X = 3900.0  # keep targets a little inside the side walls (SIDE_WALL_X, 4096)
FIELD_Y = 5000.0
KICKOFF_SPOT_UU = 1.0  # ball within this of the centre spot and this slow (uu/s): kickoff


@dataclass(frozen=True)
class RuleParams:
    """The bot's tuning, in uu, uu/s, seconds and radians.

    Tuned against `random` in 1v1 on arena's game runner: goals per minute from random start
    states, kickoff goals, and 60-second games (see tests/test_rule_bot.py).
    """

    # Driving.
    steer_deadband: float = 0.08  # steer is only -1/0/1: a small deadband stops zig-zagging
    powerslide_angle: float = 1.9
    powerslide_min_speed: float = 500.0
    boost_max_angle: float = 0.3
    boost_min_distance: float = 1000.0
    # Attacking: aim behind the ball, further when the car is not yet lined up with the goal.
    behind_share: float = 0.25  # offset = share of the distance to the ball, capped
    behind_max: float = 400.0
    misaligned_gain: float = 0.5  # offset grows by this share per radian of misalignment
    ball_lead_max: float = 1.0  # s of ball prediction at most
    ball_lead_speed: float = 2500.0  # lead time = distance / this
    # Kickoff: aim behind the centre spot, flip into the ball from this far.
    kickoff_behind_share: float = 0.25
    kickoff_behind_max: float = 400.0
    kickoff_flip_distance: float = 450.0
    # Defending: the car attacks only when this far goal-side of the ball (negative: below it).
    upfield_margin: float = -300.0
    pass_side_offset: float = 1700.0  # lateral distance at which the car passes the ball going back
    goal_side_depth: float = 1200.0  # how far goal-side of the ball it aims
    # Jumping and flipping (car-centre heights; a resting car is at z = 17).
    flip_base_distance: float = 200.0
    flip_distance_per_speed: float = 0.2  # s: start earlier when faster, the jump takes two decisions
    flip_max_angle: float = 0.3
    flip_max_misalignment: float = 0.6  # only flip into a ball when that sends it roughly goalwards
    low_ball_z: float = 250.0  # below: jump then front-flip
    high_ball_z: float = 450.0  # between low and high: jump and hold
    just_jumped_z: float = 50.0  # airborne below this and rising fast: the jump was just pressed
    just_jumped_vz: float = 150.0
    flip_max_z: float = 250.0
    flip_range: float = 550.0
    turtle_up_z: float = -0.3
    turtle_max_z: float = 100.0
    turtle_press_chance: float = 0.5


@dataclass(frozen=True)
class View:
    """What the bot reads from a batch of observations, in uu and uu/s, own-team frame."""

    pos: np.ndarray  # [N, 3]
    fwd: np.ndarray  # [N, 3]
    up: np.ndarray  # [N, 3]
    vel: np.ndarray  # [N, 3]
    boost: np.ndarray  # [N] 0..1
    on_ground: np.ndarray  # [N] bool
    ball_pos: np.ndarray  # [N, 3]
    ball_vel: np.ndarray  # [N, 3]


def read_view(obs: np.ndarray) -> View:
    ball = obs[:, LAYOUT["ball"].slice]
    car = obs[:, LAYOUT["self"].slice]
    return View(
        pos=car[:, C_POS] / POS_COEF,
        fwd=car[:, C_FWD],
        up=car[:, C_UP],
        vel=car[:, C_VEL] / VEL_COEF,
        boost=car[:, C_BOOST],
        on_ground=car[:, C_ON_GROUND] > 0.5,
        ball_pos=ball[:, BALL_POS] / POS_COEF,
        ball_vel=ball[:, BALL_VEL] / VEL_COEF,
    )


@dataclass
class Controls:
    """Discrete controls per row; turned into table indices by `to_actions`."""

    throttle: np.ndarray  # -1, 0, 1
    steer: np.ndarray  # -1, 0, 1
    boost: np.ndarray  # 0, 1
    handbrake: np.ndarray  # 0, 1
    jump: np.ndarray  # 0, 1
    pitch: np.ndarray  # -1, 0, 1 (only used with jump)

    @classmethod
    def idle(cls, n: int) -> "Controls":
        z = np.zeros(n, dtype=np.int64)
        return cls(np.ones(n, dtype=np.int64), z.copy(), z.copy(), z.copy(), z.copy(), z.copy())


def _ground_table() -> np.ndarray:
    """[throttle+1, steer+1, boost, handbrake] -> table index (boost implies full throttle)."""
    table = np.empty((3, 3, 2, 2), dtype=np.int64)
    for t in (-1, 0, 1):
        for s in (-1, 0, 1):
            for b in (0, 1):
                for h in (0, 1):
                    throttle = 1 if b else t
                    table[t + 1, s + 1, b, h] = find_action(
                        throttle=throttle, steer=s, pitch=0, roll=0, jump=0, boost=b, handbrake=h)
    return table


def _jump_table() -> np.ndarray:
    """[pitch+1, boost] -> index of a jump (a flip when pitched and already airborne)."""
    table = np.empty((3, 2), dtype=np.int64)
    for p in (-1, 0, 1):
        for b in (0, 1):
            table[p + 1, b] = find_action(pitch=p, yaw=0, roll=0, jump=1, boost=b)
    return table


def heading_error(view: View, target_xy: np.ndarray) -> np.ndarray:
    """Signed angle (radians) on the floor plane from the car's heading to the target; positive: steer +1.

    The game's frame is left-handed: steering right turns the heading counter-clockwise in
    (x, y). (Steering in the car's own frame, which would differ on walls and in the air,
    scored fewer goals against `random`.)
    """
    to_target = target_xy - view.pos[:, :2]
    angle = np.arctan2(to_target[:, 1], to_target[:, 0]) - np.arctan2(view.fwd[:, 1], view.fwd[:, 0])
    return (angle + np.pi) % (2 * np.pi) - np.pi


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-6)


def predicted_ball(view: View, p: RuleParams) -> np.ndarray:
    """Where the ball will roughly be when the car gets there (xy, clipped to the field)."""
    dist = np.linalg.norm(view.ball_pos[:, :2] - view.pos[:, :2], axis=1)
    lead = np.clip(dist / p.ball_lead_speed, 0.0, p.ball_lead_max)
    aim = view.ball_pos[:, :2] + view.ball_vel[:, :2] * lead[:, None]
    return np.clip(aim, [-FIELD_X, -FIELD_Y], [FIELD_X, FIELD_Y])


def attack_target(view: View, aim: np.ndarray, p: RuleParams) -> tuple[np.ndarray, np.ndarray]:
    """A point behind `aim` on the line from the opponent's goal through it, and how far off that
    line the car approaches (radians, 0 lined up .. pi on the wrong side).

    The offset shrinks as the car closes in, so it ends up driving through the ball towards
    the goal, and grows with the misalignment, so a car on the wrong side curves round first.
    """
    to_goal = _unit(np.array([0.0, OPP_GOAL_Y]) - aim)
    approach = aim - view.pos[:, :2]
    dist = np.linalg.norm(approach, axis=1)
    misalignment = np.arccos(np.clip(np.einsum("ij,ij->i", _unit(approach), to_goal), -1.0, 1.0))
    offset = np.minimum(dist * p.behind_share, p.behind_max) * (1.0 + p.misaligned_gain * misalignment)
    # Behind a ball by the wall lies outside the field: drive along the wall instead.
    target = np.clip(aim - to_goal * offset[:, None], [-FIELD_X, -FIELD_Y], [FIELD_X, FIELD_Y])
    return target, misalignment


def defend_target(view: View, aim: np.ndarray, p: RuleParams) -> np.ndarray:
    """Goal-side of the ball, passing it on the car's own side so the car never pushes it home."""
    side = np.where(view.pos[:, 0] >= aim[:, 0], 1.0, -1.0)
    x = np.clip(aim[:, 0] + side * p.pass_side_offset, -FIELD_X, FIELD_X)
    y = np.maximum(aim[:, 1] - p.goal_side_depth, OWN_GOAL_Y + 500.0)
    return np.stack([x, y], axis=1)


def drive(view: View, target: np.ndarray, p: RuleParams, c: Controls) -> None:
    """Steer, boost and powerslide towards `target`."""
    err = heading_error(view, target)
    speed = np.linalg.norm(view.vel, axis=1)
    dist = np.linalg.norm(target - view.pos[:, :2], axis=1)
    c.steer[:] = np.where(np.abs(err) > p.steer_deadband, np.sign(err), 0).astype(np.int64)
    c.handbrake[:] = view.on_ground & (np.abs(err) > p.powerslide_angle) & (speed > p.powerslide_min_speed)
    c.boost[:] = (view.on_ground & (np.abs(err) < p.boost_max_angle) & (dist > p.boost_min_distance)
                  & (speed < SUPERSONIC_SPEED) & (view.boost > 0))


def is_kickoff(view: View) -> np.ndarray:
    """The ball resting on the centre spot: nobody has touched it since the kickoff."""
    return (np.abs(view.ball_pos[:, :2]).max(axis=1) < KICKOFF_SPOT_UU) & (np.abs(view.ball_vel).max(axis=1) < KICKOFF_SPOT_UU)


def kickoff_target(view: View, p: RuleParams) -> np.ndarray:
    """Behind the centre spot, closer as the car nears it: diagonal spawns straighten up before the hit."""
    dist = np.linalg.norm(view.ball_pos[:, :2] - view.pos[:, :2], axis=1)
    offset = np.minimum(dist * p.kickoff_behind_share, p.kickoff_behind_max)
    return view.ball_pos[:, :2] - np.stack([np.zeros_like(offset), offset], axis=1)


def state_noise(view: View) -> np.ndarray:
    """A uniform-looking number in [0, 1) per row that depends on the car's state alone.

    The bot's only coin flip (unsticking a turtled car) uses it instead of a generator, so the
    bot is a pure function of what it sees: a game replays exactly however games are batched.
    """
    phase = view.pos @ np.array([12.9898, 78.233, 37.719]) + view.vel @ np.array([0.1234, 0.5678, 0.9123])
    return np.modf(np.abs(np.sin(phase)) * 43758.5453)[0]


def jump_and_flip(view: View, shooting: np.ndarray, reach: np.ndarray, p: RuleParams, c: Controls) -> None:
    """Jump into a ball within `reach` (uu, per row), then release and front-flip (or keep holding
    for a high ball). Only rows that are `shooting` start a jump."""
    dist = np.linalg.norm(view.ball_pos[:, :2] - view.pos[:, :2], axis=1)
    ball_err = np.abs(heading_error(view, view.ball_pos[:, :2]))
    ball_z = view.ball_pos[:, 2]
    z, vz = view.pos[:, 2], view.vel[:, 2]
    airborne = ~view.on_ground

    start = (view.on_ground & shooting & (ball_err < p.flip_max_angle) & (ball_z < p.high_ball_z)
             & (dist < reach))
    just_jumped = airborne & (z < p.just_jumped_z) & (vz > p.just_jumped_vz)
    hold = just_jumped & (ball_z >= p.low_ball_z)  # a higher ball: keep rising
    flip = (airborne & ~just_jumped & (vz > 0) & (z < p.flip_max_z) & (dist < p.flip_range)
            & (ball_z < p.low_ball_z + 100.0))
    turtled = airborne & (view.up[:, 2] < p.turtle_up_z) & (z < p.turtle_max_z)
    unstick = turtled & (state_noise(view) < p.turtle_press_chance)

    c.jump[:] = start | hold | flip | unstick
    c.pitch[:] = np.where(flip, -1, 0)
    c.boost[:] &= ~(airborne | start)  # no boost in the air or on the jump press


class RuleBot(Policy):
    """The scripted baseline `rule` (see the module docstring for what it does)."""

    name = "rule"

    def __init__(self, seed: int | None = None, params: RuleParams | None = None):
        self.params = params or RuleParams()  # the bot is deterministic: `seed` is accepted and unused
        self._ground = _ground_table()
        self._jump = _jump_table()

    def controls(self, obs: np.ndarray) -> Controls:
        view = read_view(obs)
        c = Controls.idle(len(obs))
        p = self.params
        aim = predicted_ball(view, p)
        attacking = view.pos[:, 1] < aim[:, 1] + p.upfield_margin
        shoot_target, misaligned = attack_target(view, aim, p)
        target = np.where(attacking[:, None], shoot_target, defend_target(view, aim, p))
        speed = np.linalg.norm(view.vel[:, :2], axis=1)
        reach = p.flip_base_distance + p.flip_distance_per_speed * speed
        kickoff = is_kickoff(view)
        target = np.where(kickoff[:, None], kickoff_target(view, p), target)
        reach = np.where(kickoff, p.kickoff_flip_distance, reach)
        drive(view, target, p, c)
        c.boost[:] |= kickoff & view.on_ground  # the race to the ball: full boost
        jump_and_flip(view, kickoff | (attacking & (misaligned < p.flip_max_misalignment)), reach, p, c)
        return c

    def to_actions(self, c: Controls) -> np.ndarray:
        ground = self._ground[c.throttle + 1, c.steer + 1, c.boost, c.handbrake]
        jumping = self._jump[c.pitch + 1, c.boost]
        return np.where(c.jump.astype(bool), jumping, ground)

    def act(
        self,
        obs: np.ndarray,
        state: State = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, State]:
        return self.to_actions(self.controls(obs)), None
