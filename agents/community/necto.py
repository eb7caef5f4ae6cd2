"""Necto (Rolv-Arild and the Necto team; CC BY-NC-SA 4.0) as a batched league agent.

Necto's network is written here from the description in its TorchScript archive's `code/` files
(an EARL perceiver: the car's 32-float query attends once, with four heads, over 24-float
entries for the ball, every car and the 34 boost pads; no layer norms; five heads), and its
weights are read as tensors only (`NectoPolicy.from_tensors`, from
`agents.community.tensors.read_torchscript_tensors`), never by running or unpickling the archive.
Its input is rebuilt from `agents.game_state.GameArrays` exactly as the bot's
`necto_obs.py` builds it, for every row at once, including the per-bot memory that builder keeps
between steps (boost-pad and demo timers); its five heads become eight controls as the bot's
`agent.py` does at beta 1 (argmax), the setting `bot.py` plays with.

The timers, as `necto_obs.py` has them (and as kept here, per row, in float64):
- demo timer: the same for every car and unrelated to demolitions. It starts at 3 on a fresh
  builder and loses 8/120 per step down to 0, and the step after it reads 0 it is 3 again
  (a cycle of 46 steps); the car entries carry timer / 10.
- boost-pad timers: a pad that is *available* and whose timer is 0 gets 0.4 (small pad) or 1.0
  (big pad), a pad that is taken gets 0; the entry carries that value, then it loses 8/1200 per
  step, floored at 0. So available pads cycle (a small pad every 61 steps, a big one every 150)
  and taken pads read 0: the reverse of what the names suggest, but what the bot plays with.
- the mask it hands the network is all zeros (the slice it sets to 1 is empty), and the model
  adds the mask to the attention logits, so nothing is masked.

Not reproduced:
- bot.py's scripted kickoff (KICKOFF_CONTROLS, played by the car it picks as kickoff taker while
  the ball sits at the centre during a kickoff pause): here the network plays kickoffs too, and
  the previous controls in the query are the runner's (bot.py feeds back the scripted ones).
- bot.py's beta 0 (uniformly random actions) once the match has ended, and sampling at other
  betas: the adapter always plays beta 1.
- when the memory restarts: bot.py builds its observation builder once, when the bot is
  initialised, and keeps its timers across goals and kickoffs; here a row's memory restarts
  where `episode_start` is true, so a caller that marks only the start of a match gets bot.py's
  timers, and one that marks every kickoff restarts them more often.
- what rlgym_compat 1.x decodes from the RLBot packet: has_flip here is the runner's (RLGym v2's:
  no flip or double jump used and within 1.25 s of the jump) where rlgym_compat says "not double
  jumped"; on_ground is RocketSim's where rlgym_compat also counts the 6 ticks after wheel contact;
  orientation comes from the rotation matrix rather than from Euler angles; pad positions come
  from Necto's own BOOST_LOCATIONS table (equal to RLGym's) rather than the game's field info.
- the attention weights the model also returns (bot.py draws them with render=True), and bot.py's
  tick counting from the game clock: the adapter acts every `tick_skip` ticks exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from agents.community.tensors import check_tensors as check_bot_tensors
from agents.game_state import GameArrays

TICK_SKIP = 8
N_PADS = 34
ENTRY_DIM = 24  # one attention entry: the ball, a car or a boost pad
QUERY_DIM = ENTRY_DIM + 8  # the own car's entry and its previous controls
EMBED_DIM = 128
N_HEADS = 4
HIDDEN_DIM = 256
HEAD_SIZES = (3, 3, 2, 2, 2)  # throttle, steer, jump, boost, handbrake

# necto_obs.py's BOOST_LOCATIONS (RLGym's order and values); a pad higher than 72 uu is a big pad.
BOOST_LOCATIONS = np.array([
    (0.0, -4240.0, 70.0), (-1792.0, -4184.0, 70.0), (1792.0, -4184.0, 70.0), (-3072.0, -4096.0, 73.0),
    (3072.0, -4096.0, 73.0), (-940.0, -3308.0, 70.0), (940.0, -3308.0, 70.0), (0.0, -2816.0, 70.0),
    (-3584.0, -2484.0, 70.0), (3584.0, -2484.0, 70.0), (-1788.0, -2300.0, 70.0), (1788.0, -2300.0, 70.0),
    (-2048.0, -1036.0, 70.0), (0.0, -1024.0, 70.0), (2048.0, -1036.0, 70.0), (-3584.0, 0.0, 73.0),
    (-1024.0, 0.0, 70.0), (1024.0, 0.0, 70.0), (3584.0, 0.0, 73.0), (-2048.0, 1036.0, 70.0),
    (0.0, 1024.0, 70.0), (2048.0, 1036.0, 70.0), (-1788.0, 2300.0, 70.0), (1788.0, 2300.0, 70.0),
    (-3584.0, 2484.0, 70.0), (3584.0, 2484.0, 70.0), (0.0, 2816.0, 70.0), (-940.0, 3310.0, 70.0),
    (940.0, 3308.0, 70.0), (-3072.0, 4096.0, 73.0), (3072.0, 4096.0, 73.0), (-1792.0, 4184.0, 70.0),
    (1792.0, 4184.0, 70.0), (0.0, 4240.0, 70.0),
])
BIG_PADS = BOOST_LOCATIONS[:, 2] > 72
PAD_TIMER_START = 0.4 + 0.6 * BIG_PADS  # as necto_obs computes it, in float64
PAD_TIMER_STEP = TICK_SKIP / 1200  # "pre-normalized, 120 fps for 10 seconds"
DEMO_TIMER_START = 3.0
DEMO_TIMER_STEP = TICK_SKIP / 120

# Entry columns: is_main, is_teammate, is_opponent, is_ball, is_boost, position (3), velocity (3),
# forward (3), up (3), angular velocity (3), boost amount, timer, on ground, has flip.
IS_MAIN, IS_TEAMMATE, IS_OPPONENT, IS_BALL, IS_BOOST = 0, 1, 2, 3, 4
POS, VEL, FWD, UP, ANG_VEL = slice(5, 8), slice(8, 11), slice(11, 14), slice(14, 17), slice(17, 20)
BOOST, TIMER, ON_GROUND, HAS_FLIP = 20, 21, 22, 23
NORM = np.array([1.0] * 5 + [2300.0] * 6 + [1.0] * 6 + [5.5] * 3 + [1.0] * 4)
ORANGE_FLIP = np.array([1.0] * 5 + [-1.0, -1.0, 1.0] * 5 + [1.0] * 4)  # a 180-degree turn about z

BLUE = 0


def _expected_tensors() -> dict[str, tuple[int, ...]]:
    """Every tensor of Necto's state dict and its shape (all float32), as torch.jit keys them."""
    shapes = {
        "net.earl.query_preprocess.0.weight": (EMBED_DIM, QUERY_DIM),
        "net.earl.query_preprocess.0.bias": (EMBED_DIM,),
        "net.earl.query_preprocess.2.weight": (EMBED_DIM, EMBED_DIM),
        "net.earl.query_preprocess.2.bias": (EMBED_DIM,),
        "net.earl.key_value_preprocess.0.weight": (EMBED_DIM, ENTRY_DIM),
        "net.earl.key_value_preprocess.0.bias": (EMBED_DIM,),
        "net.earl.key_value_preprocess.2.weight": (EMBED_DIM, EMBED_DIM),
        "net.earl.key_value_preprocess.2.bias": (EMBED_DIM,),
        "net.earl.blocks.0.attention.in_proj_weight": (3 * EMBED_DIM, EMBED_DIM),
        "net.earl.blocks.0.attention.in_proj_bias": (3 * EMBED_DIM,),
        "net.earl.blocks.0.attention.out_proj.weight": (EMBED_DIM, EMBED_DIM),
        "net.earl.blocks.0.attention.out_proj.bias": (EMBED_DIM,),
        "net.earl.blocks.0.linear1.weight": (HIDDEN_DIM, EMBED_DIM),
        "net.earl.blocks.0.linear1.bias": (HIDDEN_DIM,),
        "net.earl.blocks.0.linear2.weight": (EMBED_DIM, HIDDEN_DIM),
        "net.earl.blocks.0.linear2.bias": (EMBED_DIM,),
        "net.output.linear.weight": (sum(HEAD_SIZES), EMBED_DIM),
        "net.output.linear.bias": (sum(HEAD_SIZES),),
    }
    return shapes


NECTO_TENSORS = _expected_tensors()
STATE_DICT_PREFIX = "net."  # the archive's DiscretePolicy wraps the network as `net`


class Attention(nn.Module):
    """torch's MultiheadAttention as the archive traced it: batch first, the mask added to the logits.

    `forward` computes it refolded, `literal` as written: each head's key and value projections are
    moved from the entries (K of them, 37 to 41) to the query's side, where one product per head does:
    q.(W_k e + b_k) = (W_k^T q).e + q.b_k, and q.b_k is the same for every entry, which softmax drops;
    sum_j a_j (W_v e_j + b_v) = W_v (sum_j a_j e_j) + b_v, the weights a_j summing to 1. The same
    function, the whole network's forward in about half the time at the league's batches
    (python -m training.measure.teacher_labels), equal to `literal`'s to float32 rounding
    (tests/test_teacher_labels_speed_paths.py)."""

    def __init__(self) -> None:
        super().__init__()
        self.in_proj_weight = nn.Parameter(torch.empty(3 * EMBED_DIM, EMBED_DIM))
        self.in_proj_bias = nn.Parameter(torch.empty(3 * EMBED_DIM))
        self.out_proj = nn.Linear(EMBED_DIM, EMBED_DIM)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, _, b_v = self.in_proj_bias.chunk(3)  # b_k: the same logit for every entry, which softmax drops
        n, n_q, head_dim = len(query), query.shape[1], EMBED_DIM // N_HEADS
        q = F.linear(query, w_q, b_q).view(n, n_q, N_HEADS, head_dim) / math.sqrt(head_dim)
        # Each (query, head) seen through the head's key projection: [n, n_q * heads, EMBED_DIM]
        qk = torch.einsum("nqhd,hde->nqhe", q, w_k.view(N_HEADS, head_dim, EMBED_DIM)).reshape(n, -1, EMBED_DIM)
        logits = torch.bmm(qk, keys.transpose(1, 2)) + mask[:, None, :]  # [n, n_q * heads, K]
        mixed = torch.bmm(torch.softmax(logits, dim=-1), keys)  # the entries each head attends to, averaged
        out = torch.einsum("nqhe,hde->nqhd", mixed.view(n, n_q, N_HEADS, EMBED_DIM),
                           w_v.view(N_HEADS, head_dim, EMBED_DIM))
        return self.out_proj(out.reshape(n, n_q, EMBED_DIM) + b_v)

    def literal(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """The archive's own form (the reference `forward` is checked against)."""
        w_q, w_k, w_v = self.in_proj_weight.chunk(3)
        b_q, b_k, b_v = self.in_proj_bias.chunk(3)
        n, n_q, n_kv, head_dim = len(query), query.shape[1], keys.shape[1], EMBED_DIM // N_HEADS
        q = F.linear(query, w_q, b_q).view(n, n_q, N_HEADS, head_dim).transpose(1, 2)
        k = F.linear(keys, w_k, b_k).view(n, n_kv, N_HEADS, head_dim).transpose(1, 2)
        v = F.linear(keys, w_v, b_v).view(n, n_kv, N_HEADS, head_dim).transpose(1, 2)
        # The archive's key_padding_mask is a float mask: added as is, not turned into -inf.
        logits = (q / math.sqrt(head_dim)) @ k.transpose(-2, -1) + mask[:, None, None, :]
        out = torch.softmax(logits, dim=-1) @ v  # [n, heads, n_q, head_dim]
        return self.out_proj(out.transpose(1, 2).reshape(n, n_q, EMBED_DIM))


class PerceiverBlock(nn.Module):
    """One cross-attention step with a residual feed-forward (EARLPerceiverBlock, no norms, no dropout)."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = Attention()
        self.linear1 = nn.Linear(EMBED_DIM, HIDDEN_DIM)
        self.linear2 = nn.Linear(HIDDEN_DIM, EMBED_DIM)

    def forward(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor,
                literal: bool = False) -> torch.Tensor:
        x = query + (self.attention.literal if literal else self.attention)(query, keys, mask)
        return x + self.linear2(torch.relu(self.linear1(x)))


class Perceiver(nn.Module):
    """EARLPerceiver: two-layer ReLU embeddings of the query and the entries, then one block."""

    def __init__(self) -> None:
        super().__init__()
        self.query_preprocess = nn.Sequential(
            nn.Linear(QUERY_DIM, EMBED_DIM), nn.ReLU(), nn.Linear(EMBED_DIM, EMBED_DIM), nn.ReLU())
        self.key_value_preprocess = nn.Sequential(
            nn.Linear(ENTRY_DIM, EMBED_DIM), nn.ReLU(), nn.Linear(EMBED_DIM, EMBED_DIM), nn.ReLU())
        self.blocks = nn.ModuleList([PerceiverBlock()])

    def forward(self, q: torch.Tensor, kv: torch.Tensor, mask: torch.Tensor, literal: bool = False) -> torch.Tensor:
        return self.blocks[0](self.query_preprocess(q), self.key_value_preprocess(kv), mask, literal)


class Heads(nn.Module):
    """ControlsPredictorDiscrete: one linear layer cut into the five heads' logits."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(EMBED_DIM, sum(HEAD_SIZES))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(self.linear(x).split(HEAD_SIZES, dim=-1))


class NectoNet(nn.Module):
    """Necto's actor: perceiver, ReLU, heads; (q [n,1,32], kv [n,K,24], mask [n,K]) -> five [n,1,h] logits
    (`literal`: the attention as the archive writes it, not refolded; see Attention)."""

    def __init__(self) -> None:
        super().__init__()
        self.earl = Perceiver()
        self.output = Heads()

    def forward(self, q: torch.Tensor, kv: torch.Tensor, mask: torch.Tensor,
                literal: bool = False) -> tuple[torch.Tensor, ...]:
        return self.output(torch.relu(self.earl(q, kv, mask, literal)))


@dataclass(frozen=True)
class NectoMemory:
    """What necto_obs keeps between steps, one row per policy row (float64, as it computes them)."""

    boost_timers: np.ndarray  # [R, 34]
    demo_timer: np.ndarray  # [R]: necto_obs keeps one per car, but every car's runs the same cycle


def check_tensors(tensors: dict[str, torch.Tensor]) -> None:
    """Raise CommunityFileError, in one sentence, unless `tensors` is exactly Necto's state dict."""
    check_bot_tensors(tensors, NECTO_TENSORS, "Necto")


def viewer_orders(teams: np.ndarray) -> np.ndarray:
    """[C, C]: row c lists the car ids as bot.py orders them for car c: itself, teammates, opponents."""
    ids = np.arange(len(teams))
    return np.stack([
        np.concatenate([[c], ids[(teams == teams[c]) & (ids != c)], ids[teams != teams[c]]]) for c in ids
    ]).astype(np.int64)


def controls_from_heads(actions: np.ndarray) -> np.ndarray:
    """[R, 8] float32 controls from [R, 5] head indices, as agent.py maps them."""
    throttle, steer = actions[:, 0] - 1, actions[:, 1] - 1
    jump, boost, handbrake = actions[:, 2], actions[:, 3], actions[:, 4]
    out = np.stack([throttle, steer, throttle, steer * (1 - handbrake), steer * handbrake, jump, boost, handbrake], 1)
    return out.astype(np.float32)


class NectoPolicy:
    """Necto for many cars at once: `act` builds every row's input and runs one forward pass."""

    name = "necto"
    tick_skip = TICK_SKIP
    team_sizes = (1, 2, 3)
    # A teacher's labels may be computed in bf16 where the CPU has bf16 units (agents.teaching.label_dtype):
    # on real 1v1 and 3v3 states the argmax is float32's on 99.4% or more of them in every head, and a state's
    # largest probability difference is 0.004 at the median, 0.06 at the 99.9th percentile, 0.17 at most
    # (python -m training.measure.teacher_labels; tests/test_teacher_labels_speed_paths.py). Playing (`act`)
    # stays float32.
    reduced_label_dtype = torch.bfloat16

    def __init__(self, net: NectoNet) -> None:
        self.net = net.eval()

    @classmethod
    def from_tensors(cls, tensors: dict[str, torch.Tensor]) -> NectoPolicy:
        """The policy with Necto's weights, keyed as `torch.jit.load(necto-model.pt).state_dict()`."""
        check_tensors(tensors)
        net = NectoNet()
        net.load_state_dict({name[len(STATE_DICT_PREFIX):]: t for name, t in tensors.items()}, strict=True)
        return cls(net)

    def initial_state(self, n_rows: int) -> NectoMemory:
        """Fresh memory for n rows, as a new NectoObsBuilder holds it before its first step."""
        return NectoMemory(np.zeros((n_rows, N_PADS)), np.zeros(n_rows))

    def inputs(
        self, arrays: GameArrays, rows: np.ndarray, state: NectoMemory, episode_start: np.ndarray | None = None,
    ) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], NectoMemory]:
        """The network's (q [R,1,32], kv [R,1+C+34,24], mask [R,1+C+34]) float32 for rows e*C + c, and the memory after.

        `state` row i belongs to `rows[i]`; `episode_start[i]` restarts that row's memory first.
        """
        rows = np.asarray(rows, dtype=np.int64)
        n_cars = arrays.n_cars
        if len(state.demo_timer) != len(rows):
            raise ValueError(f"Necto's memory has {len(state.demo_timer)} rows but {len(rows)} rows were asked for")
        env, car = np.divmod(rows, n_cars)
        boost_timers, demo_timer = state.boost_timers, state.demo_timer
        if episode_start is not None:
            fresh = np.asarray(episode_start, dtype=bool)
            boost_timers = np.where(fresh[:, None], 0.0, boost_timers)
            demo_timer = np.where(fresh, 0.0, demo_timer)

        # necto_obs's timers, in its float64 arithmetic.
        demo_timer = np.where(demo_timer <= 0, DEMO_TIMER_START, np.maximum(demo_timer - DEMO_TIMER_STEP, 0.0))
        available = arrays.pads[env].astype(np.float64)
        grabs = (available == 1) & (boost_timers == 0)
        boost_timers = np.where(grabs, PAD_TIMER_START, boost_timers) * available
        pad_timer_entry = boost_timers
        next_boost_timers = boost_timers - PAD_TIMER_STEP
        next_boost_timers[next_boost_timers < 0] = 0

        n_rows, n_entries = len(rows), 1 + n_cars + N_PADS
        qkv = np.zeros((n_rows, n_entries, ENTRY_DIM))
        ball = arrays.ball[env].astype(np.float64)
        qkv[:, 0, IS_BALL] = 1
        qkv[:, 0, POS], qkv[:, 0, VEL], qkv[:, 0, ANG_VEL] = ball[:, 0:3], ball[:, 3:6], ball[:, 6:9]

        order = viewer_orders(np.asarray(arrays.teams))[car]  # [R, C] car ids, the viewer first
        cars = arrays.cars[env[:, None], order].astype(np.float64)  # [R, C, 19]
        blue = np.asarray(arrays.teams)[order] == BLUE
        entries = qkv[:, 1:1 + n_cars]
        entries[..., IS_TEAMMATE], entries[..., IS_OPPONENT] = blue, ~blue  # the blue team's view, turned below
        entries[..., POS], entries[..., VEL], entries[..., ANG_VEL] = cars[..., 0:3], cars[..., 9:12], cars[..., 12:15]
        entries[..., FWD], entries[..., UP] = cars[..., 3:6], cars[..., 6:9]
        entries[..., BOOST] = cars[..., 15] / 100  # rlgym_compat's boost_amount is 0-1
        entries[..., TIMER] = demo_timer[:, None] / 10
        entries[..., ON_GROUND], entries[..., HAS_FLIP] = cars[..., 16], cars[..., 18]

        pads = qkv[:, 1 + n_cars:]
        pads[..., IS_BOOST] = 1
        pads[..., POS] = BOOST_LOCATIONS
        pads[..., BOOST] = 0.12 + 0.88 * BIG_PADS
        pads[..., TIMER] = pad_timer_entry

        qkv /= NORM
        qkv[:, 1, IS_MAIN] = 1
        orange = np.asarray(arrays.teams)[car] != BLUE
        swapped = qkv[orange]
        swapped[..., [IS_TEAMMATE, IS_OPPONENT]] = swapped[..., [IS_OPPONENT, IS_TEAMMATE]]
        qkv[orange] = swapped * ORANGE_FLIP

        prev = arrays.prev_controls[env, car].astype(np.float64)
        q = np.concatenate([qkv[:, 1], prev], axis=1)[:, None, :]
        qkv[..., 5:11] -= q[:, :, 5:11]  # positions and velocities relative to the own car
        mask = np.zeros((n_rows, n_entries), np.float32)
        memory = NectoMemory(next_boost_timers, demo_timer)
        return (q.astype(np.float32), qkv.astype(np.float32), mask), memory

    def logits(self, q: np.ndarray, kv: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, ...]:
        """The five heads' logits [R, 1, h] for a batch of inputs."""
        with torch.inference_mode():
            return self.net(torch.from_numpy(q), torch.from_numpy(kv), torch.from_numpy(mask))

    def act(
        self, arrays: GameArrays, rows: np.ndarray, state: NectoMemory, episode_start: np.ndarray | None = None,
    ) -> tuple[np.ndarray, NectoMemory]:
        """Controls [R, 8] float32 (throttle, steer, pitch, yaw, roll, jump, boost, handbrake) and the new memory."""
        controls, _, memory = self.act_probs(arrays, rows, state, episode_start)
        return controls, memory

    def act_probs(
        self, arrays: GameArrays, rows: np.ndarray, state: NectoMemory, episode_start: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, NectoMemory]:
        """As `act`, with each head's probabilities [R, 12] (throttle 3, steer 3, jump 2, boost 2, handbrake 2:
        agents.action_spaces' necto space) between the controls and the memory."""
        (q, kv, mask), memory = self.inputs(arrays, rows, state, episode_start)
        if len(q) == 0:
            return np.zeros((0, 8), np.float32), np.zeros((0, sum(HEAD_SIZES)), np.float32), memory
        heads = self.logits(q, kv, mask)
        actions = torch.stack([h[:, 0].argmax(dim=-1) for h in heads], dim=1).numpy()
        probs = torch.cat([torch.softmax(h[:, 0].float(), dim=-1) for h in heads], dim=1).numpy()
        return controls_from_heads(actions), probs, memory
