"""`rule-pro`: `rule` with team play, boost management and shadowing, from the observation alone.

Like `rule`, every decision is a boolean mask over the batch's rows, in the observer's own-team
frame (attacking +y), and the bot is a pure function of what it sees (deterministic). On top of
`rule`'s attacking, defending, kickoff and flip logic:

- roles (2v2, 3v3): every car of a team scores itself and its teammates (the observation's
  mate blocks) by how well placed each is to play the ball: an estimated time to reach it,
  plus penalties for facing away and for being on the wrong side of it (the ball between the
  car and its own goal). The best placed car challenges (runs `rule`'s logic), the next
  supports a little goal-side of the ball, the last holds deep goal-side. Each car of a team
  computes the same scores from the same car blocks, so exactly one car challenges: no double
  commits. Demolished cars get no role. In 1v1 the one car is always the challenger;
- boost: a car low on boost that is not needed at the ball (a back car, or a challenger whose
  ball is far up-field and not threatening) detours over the nearest available big pad when
  the detour is short;
- kickoff (1v1): the flip into the ball starts further out than `rule`'s, so the car reaches
  the ball first (measured in ProParams);
- shadowing: a challenger that is goal-side of the ball while an opponent reaches the ball
  clearly first backs off to a point between the ball and its own goal, facing the ball,
  instead of driving into a 50/50 it would lose;
- back cars drive to their spot, passing the ball wide on their own side when they are up-field
  of it (like `rule`'s defence), and at their spot turn to face the ball and wait.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from agents.obs import C_BOOST, C_DEMOED, C_FWD, C_POS, C_PRESENT, C_VEL, LAYOUT, POS_COEF, VEL_COEF
from agents.rule_bot import (
    FIELD_X,
    OWN_GOAL_Y,
    Controls,
    RuleBot,
    RuleParams,
    View,
    attack_target,
    defend_target,
    drive,
    heading_error,
    is_kickoff,
    jump_and_flip,
    kickoff_target,
    predicted_ball,
    read_view,
)
from league.game_values import BIG_PADS, BOOST_PADS

# Big boost pads in the own-team frame: the observation lists pads so that pad i of any observer
# sits at BOOST_PADS[i] in that observer's frame.
BIG_PAD_XY = np.array(BOOST_PADS)[list(BIG_PADS), :2]
TEAM_SLOTS = ("self", "mate0", "mate1")
OPP_SLOTS = ("opp0", "opp1", "opp2")
CHALLENGE, SUPPORT, LAST = 0, 1, 2


@dataclass(frozen=True)
class ProParams:
    """rule-pro's tuning on top of `rule`'s, in uu, uu/s, seconds and radians."""

    rule: RuleParams = field(default_factory=RuleParams)
    # Who challenges: estimated seconds to the ball plus penalties.
    eta_min_speed: float = 1000.0  # a slow car is assumed to reach this speed
    facing_penalty: float = 0.35  # s per radian the car must turn to face the ball
    wrong_side_penalty: float = 1.0  # s when the ball is between the car and its own goal
    wrong_side_margin: float = 200.0
    # Where back cars wait.
    support_depth: float = 600.0  # goal-side of the ball, right behind it: ready for the follow-up
    last_depth: float = 2500.0
    support_x_share: float = 1.0  # share of the ball's x the spot keeps
    last_x_share: float = 0.25
    min_goal_distance: float = 700.0  # never wait deeper than this in front of the own goal line
    arrive_radius: float = 700.0
    wait_speed: float = 400.0
    # Boost.
    low_boost: float = 0.3  # challenger: fetch boost below this
    back_low_boost: float = 0.6  # back cars: fetch boost below this
    max_detour: float = 1500.0  # challenger
    back_max_detour: float = 2500.0
    boost_ball_distance: float = 3000.0  # challenger only fetches boost when the ball is this far ...
    boost_ball_min_y: float = 0.0  # ... or in the opponents' half (own frame y above this)
    # Kickoff, 1v1: flip into the ball from further out than `rule` (450 uu), reaching it first.
    # Measured against `rule`, 40 one-minute 1v1 games each: 450 13-13-14, 550 25-8-7, 600 24-8-8,
    # 700 6-4-30, 800 19-6-15; on other seeds 550/575 26-9-5, 600 29-7-4. In 2v2 and 3v3 (other
    # kickoff spots, one car going) 575 lost to `rule` (12-10-18, 13-17-10), so teams keep 450.
    solo_kickoff_flip_distance: float = 575.0
    # Shadowing.
    shadow: bool = False  # measured: shadowing lost more 1v1 games to `rule` than it saved
    shadow_lead: float = 0.4  # s: an opponent this much sooner at the ball takes it
    shadow_depth: float = 1500.0
    shadow_max_ball_y: float = 1500.0  # only shadow in front of the own half


@dataclass(frozen=True)
class Cars:
    """Several car slots of a batch, [N, K] / [N, K, 3] arrays in uu and uu/s, own-team frame."""

    live: np.ndarray  # present and not demolished
    pos: np.ndarray
    fwd: np.ndarray
    vel: np.ndarray
    boost: np.ndarray


def read_cars(obs: np.ndarray, slots: tuple[str, ...]) -> Cars:
    blocks = np.stack([obs[:, LAYOUT[s].slice] for s in slots], axis=1)
    return Cars(
        live=(blocks[..., C_PRESENT] > 0.5) & (blocks[..., C_DEMOED] < 0.5),
        pos=blocks[..., C_POS] / POS_COEF,
        fwd=blocks[..., C_FWD],
        vel=blocks[..., C_VEL] / VEL_COEF,
        boost=blocks[..., C_BOOST],
    )


def time_to_ball(cars: Cars, ball_xy: np.ndarray, p: ProParams) -> np.ndarray:
    """[N, K] seconds each car needs to play the ball (inf for empty or demolished slots)."""
    to_ball = ball_xy[:, None, :] - cars.pos[..., :2]
    dist = np.linalg.norm(to_ball, axis=-1)
    speed = np.linalg.norm(cars.vel[..., :2], axis=-1)
    turn = np.arctan2(to_ball[..., 1], to_ball[..., 0]) - np.arctan2(cars.fwd[..., 1], cars.fwd[..., 0])
    turn = np.abs((turn + np.pi) % (2 * np.pi) - np.pi)
    wrong_side = cars.pos[..., 1] > ball_xy[:, None, 1] + p.wrong_side_margin
    eta = dist / np.maximum(speed, p.eta_min_speed) + p.facing_penalty * turn + p.wrong_side_penalty * wrong_side
    return np.where(cars.live, eta, np.inf)


def team_roles(obs: np.ndarray, ball_xy: np.ndarray, p: ProParams) -> np.ndarray:
    """[N] role of the observing car: CHALLENGE (best placed), LAST (worst placed: the one back car
    of a 2v2) or SUPPORT (between them, in 3v3).

    Ties (equal scores) are broken by the cars' positions, which every teammate sees alike, so
    all cars of a team agree on one ranking.
    """
    team = read_cars(obs, TEAM_SLOTS)
    eta = time_to_ball(team, ball_xy, p)
    x, y = team.pos[..., 0], team.pos[..., 1]
    ahead = (eta[:, 1:] < eta[:, :1]) | ((eta[:, 1:] == eta[:, :1])
                                         & ((x[:, 1:] < x[:, :1]) | ((x[:, 1:] == x[:, :1]) & (y[:, 1:] < y[:, :1]))))
    rank = (ahead & team.live[:, 1:]).sum(axis=1)
    n_live = team.live.sum(axis=1)
    return np.where(rank == 0, CHALLENGE, np.where(rank >= n_live - 1, LAST, SUPPORT))


def pad_detour(view: View, target: np.ndarray, available: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The available big pad with the shortest detour on the way to `target`: (pad xy [N, 2], detour [N] uu)."""
    pads = BIG_PAD_XY  # [P, 2]
    car = view.pos[:, None, :2]
    via = np.linalg.norm(pads[None] - car, axis=-1) + np.linalg.norm(target[:, None, :] - pads[None], axis=-1)
    direct = np.linalg.norm(target - view.pos[:, :2], axis=1)
    detour = np.where(available[:, BIG_PADS] > 0.5, via - direct[:, None], np.inf)
    best = np.argmin(detour, axis=1)
    return pads[best], detour[np.arange(len(best)), best]


def back_target(view: View, ball: np.ndarray, depth: float, x_share: float, p: ProParams) -> np.ndarray:
    """Goal-side of the ball by `depth`, between it and the middle of the own goal."""
    y = np.maximum(ball[:, 1] - depth, OWN_GOAL_Y + p.min_goal_distance)
    x = np.clip(ball[:, 0] * x_share, -FIELD_X, FIELD_X)
    return np.stack([x, y], axis=1)


class RuleProBot(RuleBot):
    """The scripted baseline `rule-pro` (see the module docstring). Deterministic, like `rule`."""

    name = "rule-pro"

    def __init__(self, seed: int | None = None, params: ProParams | None = None):
        self.pro = params or ProParams()
        super().__init__(seed, self.pro.rule)

    def controls(self, obs: np.ndarray) -> Controls:
        view = read_view(obs)
        c = Controls.idle(len(obs))
        pp, p = self.pro, self.params
        aim = predicted_ball(view, p)
        kickoff = is_kickoff(view)
        role = team_roles(obs, view.ball_pos[:, :2], pp)
        challenger = role == CHALLENGE

        # The challenger: rule's attack / defence / kickoff.
        attacking = view.pos[:, 1] < aim[:, 1] + p.upfield_margin
        shoot_target, misaligned = attack_target(view, aim, p)
        target = np.where(attacking[:, None], shoot_target, defend_target(view, aim, p))

        # Shadowing: goal-side, but an opponent gets there clearly first: back off between ball and goal.
        mine = time_to_ball(read_cars(obs, ("self",)), view.ball_pos[:, :2], pp)[:, 0]
        theirs = time_to_ball(read_cars(obs, OPP_SLOTS), view.ball_pos[:, :2], pp).min(axis=1)
        shadowing = (pp.shadow & challenger & attacking & ~kickoff & (theirs + pp.shadow_lead < mine)
                     & (aim[:, 1] < pp.shadow_max_ball_y))
        shadow_spot = back_target(view, aim, pp.shadow_depth, pp.last_x_share, pp)
        target = np.where(shadowing[:, None], shadow_spot, target)

        # Back cars: their spot, passing the ball wide when they are up-field of it.
        depth = np.where(role == SUPPORT, pp.support_depth, pp.last_depth)
        x_share = np.where(role == SUPPORT, pp.support_x_share, pp.last_x_share)
        spot = np.stack([np.clip(aim[:, 0] * x_share, -FIELD_X, FIELD_X),
                         np.maximum(aim[:, 1] - depth, OWN_GOAL_Y + pp.min_goal_distance)], axis=1)
        upfield = view.pos[:, 1] > aim[:, 1] - pp.wrong_side_margin
        spot = np.where(upfield[:, None], defend_target(view, aim, p), spot)
        target = np.where(challenger[:, None], target, spot)

        # Boost: detour over a big pad when low and not needed at the ball.
        dist_ball = np.linalg.norm(view.ball_pos[:, :2] - view.pos[:, :2], axis=1)
        calm = (dist_ball > pp.boost_ball_distance) | (view.ball_pos[:, 1] > pp.boost_ball_min_y)
        wants = np.where(challenger, (view.boost < pp.low_boost) & calm & ~shadowing,
                         view.boost < pp.back_low_boost) & ~kickoff
        pad, detour = pad_detour(view, target, obs[:, LAYOUT["pads"].slice])
        fetch = wants & (detour < np.where(challenger, pp.max_detour, pp.back_max_detour))
        target = np.where(fetch[:, None], pad, target)

        # Kickoff: only the challenger goes; the others take their spots (and boost on the way).
        target = np.where((kickoff & challenger)[:, None], kickoff_target(view, p), target)

        drive(view, target, p, c)
        # Waiting at a spot (a back car, or shadowing): face the ball, no faster than a crawl.
        waiting = ((~challenger | shadowing) & ~fetch
                   & (np.linalg.norm(target - view.pos[:, :2], axis=1) < pp.arrive_radius))
        ball_err = heading_error(view, view.ball_pos[:, :2])
        speed = np.linalg.norm(view.vel[:, :2], axis=1)
        c.steer[:] = np.where(waiting, np.where(np.abs(ball_err) > p.steer_deadband, np.sign(ball_err), 0), c.steer)
        c.throttle[:] = np.where(waiting & (speed > pp.wait_speed), 0, c.throttle)
        c.boost[:] &= ~waiting
        c.handbrake[:] &= ~waiting

        c.boost[:] |= kickoff & challenger & view.on_ground
        speed_reach = p.flip_base_distance + p.flip_distance_per_speed * speed
        solo = obs[:, LAYOUT["mate0"].start + C_PRESENT] < 0.5  # 1v1: no teammate block
        kickoff_reach = np.where(solo, pp.solo_kickoff_flip_distance, p.kickoff_flip_distance)
        reach = np.where(kickoff, kickoff_reach, speed_reach)
        shooting = challenger & ~fetch & ~shadowing & (kickoff | (attacking & (misaligned < p.flip_max_misalignment)))
        jump_and_flip(view, shooting, reach, p, c)
        return c
