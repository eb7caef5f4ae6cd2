"""Car-frame input features: what the observing car sees, rotated into its own frame.

The observation (agents/obs.py) gives positions and velocities in the field's frame. To steer
at the ball, a network has to rotate the ball's relative position by the car's orientation: a
product of inputs that a ReLU MLP only approximates after a lot of experience. `CarFrame`
computes these rotations in the network's input layer (no parameters, a few multiply-adds per
row) and appends them to the observation, so "turn towards the ball" is one linear read-out:

    ball relative position (3), its direction (3) and distance (1)
    ball velocity relative to the car (3)
    the car's own velocity (3) and angular velocity (3)
    the first opponent's relative position (3; zeros when there is none)
    direction to the goal attacked (3) and to the goal defended (3)
    direction from the ball to the goal attacked (3)
    alignment: cosine between car->ball and ball->goal attacked (1; +1 when a push goes goalwards)

all in the car's frame (forward, left, up). On by default (`policy.car_frame`);
the observation contract itself is unchanged, so every agent still speaks the same layout.
"""

from __future__ import annotations

import torch
from torch import nn

from agents.obs import (
    C_ANG_VEL,
    C_BALL_REL_POS,
    C_BALL_REL_VEL,
    C_FWD,
    C_POS,
    C_PRESENT,
    C_UP,
    C_VEL,
    LAYOUT,
    OBS_DIM,
    POS_COEF,
)
from league.game_values import BACK_WALL_Y, GOAL_CENTER_Z

GOAL_Y = BACK_WALL_Y * POS_COEF  # goal lines in observation units; the observer always attacks +y
GOAL_Z = GOAL_CENTER_Z * POS_COEF
N_FEATURES = 29


def _at(block: str, part: slice | int) -> slice | int:
    start = LAYOUT[block].start
    return slice(start + part.start, start + part.stop) if isinstance(part, slice) else start + part


def _unit(v: torch.Tensor) -> torch.Tensor:
    return v / v.norm(dim=-1, keepdim=True).clamp_min(1e-6)


class CarFrame(nn.Module):
    """obs [..., OBS_DIM] -> [..., OBS_DIM + N_FEATURES]: the observation and its car-frame features."""

    out_dim = OBS_DIM + N_FEATURES

    def __init__(self):
        super().__init__()
        self.register_buffer("attack_goal", torch.tensor([0.0, GOAL_Y, GOAL_Z]), persistent=False)
        self.register_buffer("defend_goal", torch.tensor([0.0, -GOAL_Y, GOAL_Z]), persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        fwd, up = obs[..., _at("self", C_FWD)], obs[..., _at("self", C_UP)]
        rows = torch.stack([fwd, torch.linalg.cross(up, fwd), up], dim=-2)  # [..., 3, 3]: forward, left, up
        pos = obs[..., _at("self", C_POS)]
        ball_rel = obs[..., _at("self", C_BALL_REL_POS)]
        ball_to_goal = self.attack_goal - (ball_rel + pos)
        opp_rel = (obs[..., _at("opp0", C_POS)] - pos) * obs[..., _at("opp0", C_PRESENT)].unsqueeze(-1)
        # Every vector to rotate, rotated by one matmul (one op instead of eight: this runs in every
        # forward of the game runner's hot path): rows @ v for each v.
        field = torch.stack([ball_rel, obs[..., _at("self", C_BALL_REL_VEL)], obs[..., _at("self", C_VEL)],
                             obs[..., _at("self", C_ANG_VEL)], opp_rel, self.attack_goal - pos,
                             self.defend_goal - pos, ball_to_goal], dim=-2)  # [..., 8, 3]
        local = field @ rows.transpose(-1, -2)
        moved = local[..., 1:5, :].flatten(-2)  # ball velocity, own velocity and spin, opponent
        directions = _unit(torch.cat([local[..., 0:1, :], local[..., 5:8, :]], dim=-2)).flatten(-2)
        features = torch.cat([
            local[..., 0, :], directions[..., 0:3], ball_rel.norm(dim=-1, keepdim=True), moved,
            directions[..., 3:12],  # to the goal attacked, the goal defended, and from the ball to the goal attacked
            (_unit(ball_rel) * _unit(ball_to_goal)).sum(dim=-1, keepdim=True),
        ], dim=-1)
        return torch.cat([obs, features], dim=-1)
