"""The league policy's actor in numpy: car-frame input features, an optional LSTM, the MLP head.

A port of agents/features.py (CarFrame) and agents/networks.py (the actor half of the MLP and
LSTM actor-critics) that needs no torch. The weights are read from weights.safetensors under
the names torch gave them ("actor.0.weight", "lstm.weight_ih_l0", ...); manifest.json's
"network" section says which layers there are. Arithmetic is float32, as torch's is, so the
logits agree with the league's to float rounding (the exporter's tests check it).
"""

from __future__ import annotations

import numpy as np

from league_obs import (
    C_ANG_VEL,
    C_BALL_REL_POS,
    C_BALL_REL_VEL,
    C_FWD,
    C_POS,
    C_PRESENT,
    C_UP,
    C_VEL,
    LAYOUT,
    OBS_DIM as OBS_COLUMNS,
    POS_COEF,
)

F32 = np.float32
# Goal centres in observation units; the observer always attacks +y (agents/features.py).
GOAL_Y = 5120.0 * POS_COEF
GOAL_Z = 321.0 * POS_COEF
ATTACK_GOAL = np.array([0.0, GOAL_Y, GOAL_Z], dtype=F32)
DEFEND_GOAL = np.array([0.0, -GOAL_Y, GOAL_Z], dtype=F32)
N_CAR_FRAME_FEATURES = 29
UNIT_EPS = F32(1e-6)


def _at(block: str, part):
    start = LAYOUT[block].start
    return slice(start + part.start, start + part.stop) if isinstance(part, slice) else start + part


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), UNIT_EPS)


def car_frame(obs: np.ndarray) -> np.ndarray:
    """obs [N, OBS_DIM] -> [N, OBS_DIM + 29]: the observation and its car-frame features."""
    obs = np.asarray(obs, dtype=F32)
    fwd, up = obs[:, _at("self", C_FWD)], obs[:, _at("self", C_UP)]
    rows = np.stack([fwd, np.cross(up, fwd), up], axis=-2)  # [N, 3, 3]: forward, left, up

    def local(v: np.ndarray) -> np.ndarray:
        return np.einsum("nij,nj->ni", rows, v).astype(F32, copy=False)

    pos = obs[:, _at("self", C_POS)]
    ball_rel = obs[:, _at("self", C_BALL_REL_POS)]
    ball = ball_rel + pos
    opp_rel = (obs[:, _at("opp0", C_POS)] - pos) * obs[:, _at("opp0", C_PRESENT)][:, None]
    ball_local = local(ball_rel)
    ball_to_goal = ATTACK_GOAL - ball
    features = np.concatenate([
        ball_local, _unit(ball_local), np.linalg.norm(ball_rel, axis=-1, keepdims=True),
        local(obs[:, _at("self", C_BALL_REL_VEL)]),
        local(obs[:, _at("self", C_VEL)]), local(obs[:, _at("self", C_ANG_VEL)]),
        local(opp_rel),
        _unit(local(ATTACK_GOAL - pos)), _unit(local(DEFEND_GOAL - pos)),
        _unit(local(ball_to_goal)),
        (_unit(ball_rel) * _unit(ball_to_goal)).sum(axis=-1, keepdims=True),
    ], axis=-1)
    return np.concatenate([obs, features.astype(F32, copy=False)], axis=-1)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, F32(0.0))


def _elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.expm1(np.minimum(x, F32(0.0))))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # The tanh form never overflows, unlike 1 / (1 + exp(-x)).
    return F32(0.5) * (F32(1.0) + np.tanh(F32(0.5) * x))


ACTIVATIONS = {"relu": _relu, "elu": _elu, "tanh": np.tanh}


class NumpyActor:
    """The actor of an exported league network: logits [N, 90] from observations [N, 196]."""

    def __init__(self, tensors: dict[str, np.ndarray], network: dict):
        if network["activation"] not in ACTIVATIONS:
            raise ValueError(f"unknown activation {network['activation']!r}")
        self.kind = network["kind"]
        self.recurrent = self.kind == "lstm"
        self.car_frame = bool(network["car_frame"])
        self.prev_controls = bool(network.get("prev_controls", False))  # 8 more columns after the observation
        self.activation = ACTIVATIONS[network["activation"]]

        def weight(name: str) -> np.ndarray:
            return np.ascontiguousarray(tensors[name], dtype=F32)

        # Transposed once, so each layer is one x @ W product.
        self.layers = [(np.ascontiguousarray(weight(f"{p}.weight").T), weight(f"{p}.bias"))
                       for p in network["actor_layers"]]
        if self.recurrent:
            prefix = network["lstm"]["prefix"]
            self.hidden = int(network["lstm"]["hidden"])
            self.w_ih = np.ascontiguousarray(weight(f"{prefix}.weight_ih_l0").T)
            self.w_hh = np.ascontiguousarray(weight(f"{prefix}.weight_hh_l0").T)
            self.b = weight(f"{prefix}.bias_ih_l0") + weight(f"{prefix}.bias_hh_l0")

    def initial_state(self, n: int = 1):
        """Zero hidden and cell state [n, hidden] each (None for an MLP)."""
        if not self.recurrent:
            return None
        return np.zeros((n, self.hidden), F32), np.zeros((n, self.hidden), F32)

    def inputs(self, obs: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=F32)
        prev = obs[:, OBS_COLUMNS:] if self.prev_controls else obs[:, :0]
        obs = obs[:, :OBS_COLUMNS] if self.prev_controls else obs
        return np.concatenate([car_frame(obs) if self.car_frame else obs, prev], axis=1)

    def lstm_step(self, x: np.ndarray, state):
        """One LSTM step (torch.nn.LSTM's gate order: input, forget, cell, output)."""
        h, c = state
        gates = x @ self.w_ih + h @ self.w_hh + self.b
        i, f, g, o = np.split(gates, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        return h, (h, c)

    def head(self, x: np.ndarray) -> np.ndarray:
        last = len(self.layers) - 1
        for k, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if k < last:
                x = self.activation(x)
        return x

    def logits(self, obs: np.ndarray, state=None):
        """(logits [N, 90], new state) for observations [N, 196]; state None for an MLP."""
        x = self.inputs(obs)
        if self.recurrent:
            if state is None:
                state = self.initial_state(len(x))
            x, state = self.lstm_step(x, state)
        return self.head(x), state
