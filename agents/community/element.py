"""Element (Rangler; RLGym; 1v1) as a batched league agent.

Element's network is written here from its bot folder's `agent.py` (a five-layer ReLU MLP,
107 -> 256 x5, then five three-way heads and three two-way heads, argmax), and its weights are
read as tensors only (`ElementPolicy.from_tensors`, from `agents.community.tensors`), never by
unpickling model.p. Its 107-float input is rebuilt for every row at once from
`agents.game_state.GameArrays` as the bot's `obs.py` (`CustomObs(cars=2)`) builds it:

    ball position / 2300, velocity / 2300, angular velocity / pi          9
    the bot's previous action (its eight heads after argmax, see below)    8
    boost pads available (1/0), in RLGym's (= RLBot's) pad order          34
    own car: ball - car position and velocity / 2300, position / 2300,
      forward, up, velocity / 2300, angular velocity / pi, boost 0-1,
      on ground, has flip, demolished                                      25
    the opponent: the same 25, then opponent - own position and
      velocity / 2300                                                     31

An orange car sees the field turned half a turn about the vertical axis, as the bot's
util/physics_object.py `invert` does: positions, velocities and angular velocities times
(-1, -1, 1); its Euler yaw plus pi, which turns forward and up by the same (-1, -1, 1); and the
pad list reversed (util/game_state.py; the standard pad order is symmetric under that turn, to
the 2 uu by which the pad table itself is not).

The heads become controls as bot.py's `update_controls` does: the argmax of each three-way head
minus 1 gives throttle, steer, pitch, yaw, roll in {-1, 0, 1}; the two-way heads give jump, boost,
handbrake in {0, 1}; yaw is sent as 0 whenever jump is pressed. The bot feeds its *unmodified*
action back as the next step's previous action (yaw not zeroed), so the adapter keeps it as its
per-row state; without a state it falls back to the runner's previous controls.

Not reproduced (the adapter is the bot's observation and network, not its RLBot loop):
- bot.py's scripted speed-flip kickoff (sequences/speedflip.py), which plays while the game is
  in a kickoff pause and the ball is more than 600 uu away: here the network plays kickoffs, and
  the previous action after a kickoff is the network's own, where bot.py feeds back the
  sequence's last action.
- bot.py's timing: it computes each action from the state one tick after sending the previous
  one and sends it six ticks later (so it acts on a state 6 ticks old), and counts ticks from the
  game clock; the adapter acts on the state it is handed, every `tick_skip` ticks exactly.
- bot.py's choice of opponent for more than two cars (closest to the ball in the same rank): the
  adapter plays 1v1 only (`team_sizes = (1,)`), where the opponent is simply the other car.
- when the previous action restarts: bot.py zeroes it once, when the bot is initialised, and
  keeps it across goals; here a row restarts at zeros where `episode_start` is true.
- what util/game_state.py decodes from the RLBot packet: has_flip here is the runner's (RLGym
  v2's: no flip or double jump used and within 1.25 s of the jump) where the bot uses "not double
  jumped"; on_ground is the runner's (RLGym v2: three or more wheels touching) where the bot takes
  RLBot's has_wheel_contact and also counts the 6 ticks after it; forward and up come from the
  rotation matrix rather than from the packet's Euler angles (equal to float precision).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from agents.community.tensors import check_tensors as check_bot_tensors
from agents.game_state import CAR_HAS_FLIP, N_CONTROLS, GameArrays

TICK_SKIP = 8
N_INPUTS = 107
HIDDEN = 256
N_CATEGORICAL, N_BERNOULLI = 5, 3  # throttle, steer, pitch, yaw, roll; jump, boost, handbrake
POS_STD = 2300.0
ANG_STD = math.pi
BOOST_FULL = 100.0  # the runner's boost is 0-100; the bot's boost_amount (RLBot boost / 100) is 0-1
ORANGE = 1
ORANGE_FLIP = np.array([-1.0, -1.0, 1.0])
YAW, JUMP = 3, 5

WEIGHT_SHAPES = {
    **{f"fc{i}.weight": (HIDDEN, N_INPUTS if i == 1 else HIDDEN) for i in range(1, 6)},
    **{f"fc{i}.bias": (HIDDEN,) for i in range(1, 6)},
    "cat_heads.weight": (3 * N_CATEGORICAL, HIDDEN),
    "cat_heads.bias": (3 * N_CATEGORICAL,),
    "ber_heads.weight": (2 * N_BERNOULLI, HIDDEN),
    "ber_heads.bias": (2 * N_BERNOULLI,),
}
_LAYERS = [f"fc{i}" for i in range(1, 6)]


def check_tensors(tensors: dict[str, torch.Tensor]) -> None:
    """Refuse, in one sentence, a tensors dict that is not Element's model.p (names, shapes, dtype, finite)."""
    check_bot_tensors(tensors, WEIGHT_SHAPES, "Element")


class ElementPolicy:
    """Element for many 1v1 cars at once: `act` builds every row's input and runs one forward pass."""

    name = "element"
    tick_skip = TICK_SKIP
    team_sizes = (1,)

    def __init__(self, weights: dict[str, torch.Tensor]) -> None:
        self.weights = {k: v.detach().clone().contiguous() for k, v in weights.items()}

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor]) -> ElementPolicy:
        """The policy with Element's weights, keyed as model.p's state dict (read_state_dict(model.p))."""
        check_tensors(tensors)
        return cls(tensors)

    def initial_state(self, n_rows: int) -> np.ndarray:
        """The bot's previous action for n fresh rows: zeros, as bot.py starts."""
        return np.zeros((n_rows, N_CONTROLS), np.float32)

    def inputs(
        self, arrays: GameArrays, rows: np.ndarray, state: np.ndarray | None = None,
        episode_start: np.ndarray | None = None,
    ) -> np.ndarray:
        """The network's input [R, 107] float32 for rows e*C + c (see the module's docstring).

        `state` row i is row `rows[i]`'s previous action (the bot's own, from `act`); without it the
        runner's previous controls stand in. `episode_start[i]` makes that row's previous action zeros.
        """
        rows = np.asarray(rows, dtype=np.int64)
        if arrays.n_cars != 2:
            raise ValueError(f"Element plays 1v1 only, but the game has {arrays.n_cars} cars")
        env, car = np.divmod(rows, 2)
        previous = self._previous(arrays, env, car, state, episode_start)

        sign = np.where((np.asarray(arrays.teams)[car] == ORANGE)[:, None], ORANGE_FLIP, 1.0)  # [R, 3]
        ball = arrays.ball[env].astype(np.float64)
        ball_pos, ball_vel = ball[:, 0:3] * sign, ball[:, 3:6] * sign
        pads = arrays.pads[env].astype(np.float64)
        pads = np.where((np.asarray(arrays.teams)[car] == ORANGE)[:, None], pads[:, ::-1], pads)

        own = arrays.cars[env, car].astype(np.float64)
        opponent = arrays.cars[env, 1 - car].astype(np.float64)
        own_block, own_pos, own_vel = _car_block(own, sign, ball_pos, ball_vel)
        opp_block, opp_pos, opp_vel = _car_block(opponent, sign, ball_pos, ball_vel)
        x = np.concatenate(
            [
                ball_pos / POS_STD, ball_vel / POS_STD, ball[:, 6:9] * sign / ANG_STD,
                previous, pads,
                own_block,
                opp_block, (opp_pos - own_pos) / POS_STD, (opp_vel - own_vel) / POS_STD,
            ],
            axis=1,
        )
        return x.astype(np.float32)

    def act(
        self, arrays: GameArrays, rows: np.ndarray, state: np.ndarray | None = None,
        episode_start: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Controls [R, 8] float32 (throttle, steer, pitch, yaw, roll, jump, boost, handbrake) and the new
        state: the bot's action [R, 8] before bot.py zeroes yaw under jump, its next previous action."""
        controls, _, action = self.act_probs(arrays, rows, state, episode_start)
        return controls, action

    def act_probs(
        self, arrays: GameArrays, rows: np.ndarray, state: np.ndarray | None = None,
        episode_start: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As `act`, with each head's probabilities [R, 21] (throttle, steer, pitch, yaw, roll 3 each, then
        jump, boost, handbrake 2 each: agents.action_spaces' element space) between controls and state."""
        x = self.inputs(arrays, rows, state, episode_start)
        if len(x) == 0:
            empty = np.zeros((0, N_CONTROLS), np.float32)
            return empty, np.zeros((0, 3 * N_CATEGORICAL + 2 * N_BERNOULLI), np.float32), empty
        categorical, bernoulli = self.probabilities(torch.from_numpy(x))
        action = np.concatenate(
            [categorical.argmax(dim=2).numpy() - 1, bernoulli.argmax(dim=2).numpy()], axis=1
        ).astype(np.float32)
        controls = action.copy()
        controls[:, YAW] = np.where(action[:, JUMP] > 0, 0.0, action[:, YAW])  # bot.py's update_controls
        probs = torch.cat([categorical.reshape(len(x), -1), bernoulli.reshape(len(x), -1)], dim=1).numpy()
        return controls, probs, action

    def probabilities(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """agent.py's Actor.forward: softmax over the three-way heads [R, 5, 3] and two-way heads [R, 3, 2]."""
        w = self.weights
        with torch.inference_mode():
            for layer in _LAYERS:
                x = F.relu(F.linear(x, w[f"{layer}.weight"], w[f"{layer}.bias"]))
            categorical = F.linear(x, w["cat_heads.weight"], w["cat_heads.bias"]).view(-1, N_CATEGORICAL, 3)
            bernoulli = F.linear(x, w["ber_heads.weight"], w["ber_heads.bias"]).view(-1, N_BERNOULLI, 2)
            return F.softmax(categorical, dim=2), F.softmax(bernoulli, dim=2)

    @staticmethod
    def _previous(arrays, env, car, state, episode_start) -> np.ndarray:
        if state is None:
            previous = arrays.prev_controls[env, car].astype(np.float64)
        else:
            previous = np.asarray(state, dtype=np.float64)
            if previous.shape != (len(env), N_CONTROLS):
                raise ValueError(f"Element's state has shape {previous.shape} but {len(env)} rows were asked for")
        if episode_start is not None:
            previous = np.where(np.asarray(episode_start, dtype=bool)[:, None], 0.0, previous)
        return previous


def _car_block(car: np.ndarray, sign: np.ndarray, ball_pos: np.ndarray, ball_vel: np.ndarray):
    """obs.py's _add_player_to_obs for rows of raw car columns [R, 19], in the viewer's frame."""
    pos, vel = car[:, 0:3] * sign, car[:, 9:12] * sign
    block = np.concatenate(
        [
            (ball_pos - pos) / POS_STD, (ball_vel - vel) / POS_STD, pos / POS_STD,
            car[:, 3:6] * sign, car[:, 6:9] * sign, vel / POS_STD, car[:, 12:15] * sign / ANG_STD,
            car[:, 15:16] / BOOST_FULL, car[:, 16:17], car[:, CAR_HAS_FLIP:CAR_HAS_FLIP + 1], car[:, 17:18],
        ],
        axis=1,
    )
    return block, pos, vel
