"""LeaguePolicyRunner: the exported league policy playing from RLBot packets, without a game.

    runner = LeaguePolicyRunner()                 # reads manifest.json and weights.safetensors beside it
    runner.prepare(field_info)                    # once: matches the field's boost pads to the league's
    controls = runner.act(packet, field_info, index)   # every packet: an rlbot.flat.ControllerState

What it does, as the league's games do it:
  - an action is chosen every `tick_skip` physics ticks (counted with match_info.frame_num, so
    skipped packets do not shift the count) and repeated in between;
  - a kickoff (the match start, or the restart after a goal) begins a league episode: the
    LSTM state is zeroed and the action cycle starts again at the first packet of play;
  - during the kickoff countdown the cars cannot move: the bot holds the action it will take
    at go, computed from a fresh state without advancing it;
  - in replays, pauses and outside a match it sends neutral controls.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

import league_actions
import league_obs
from league_net import NumpyActor
from league_packet import (
    PHASE_ACTIVE,
    PHASE_COUNTDOWN,
    PHASE_GOAL_SCORED,
    PHASE_KICKOFF,
    pad_order,
    raw_ball,
    raw_cars,
    raw_game,
    raw_pads,
)

HERE = Path(__file__).resolve().parent
MANIFEST = "manifest.json"
WEIGHTS = "weights.safetensors"
# Phases in which the cars are driven (GoalScored: after a goal, before the replay, cars still move).
PLAYING = (PHASE_KICKOFF, PHASE_ACTIVE, PHASE_GOAL_SCORED)
KICKOFF_PHASES = (PHASE_COUNTDOWN, PHASE_KICKOFF)
# The observation layout and action table this code was written for.
SUPPORTED_OBS_LAYOUTS = (1,)
SUPPORTED_ACTION_TABLES = (1,)


def _controller_state():
    from rlbot.flat import ControllerState  # imported here so the runner's maths load without rlbot

    return ControllerState


class LeaguePolicyRunner:
    def __init__(self, folder: str | Path = HERE, *, deterministic: bool | None = None, seed: int | None = None):
        folder = Path(folder)
        self.manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        self._check_versions()
        self.tick_skip = int(self.manifest["tick_skip"])
        self.deterministic = bool(self.manifest["deterministic"] if deterministic is None else deterministic)
        self.temperature = float(self.manifest.get("temperature", 1.0))  # sampled play, as the agent trained
        self.actor = NumpyActor(load_file(str(folder / WEIGHTS)), self.manifest["network"])
        self.recurrent = self.actor.recurrent
        self.rng = np.random.default_rng(seed)
        self._controls = _controller_state()
        self._table = [tuple(float(v) for v in row) for row in self.manifest["action_table"]]
        self._heads = [int(n) for n in self.manifest.get("head_sizes", [len(self._table)])]
        self._pad_order: np.ndarray | None = None
        self._field = None
        self.index: int | None = None
        self.last_frame: int | None = None
        self.in_kickoff = False
        self.decisions = 0  # actions chosen since construction (tests read it)
        self.reset()

    def _check_versions(self) -> None:
        m = self.manifest
        if m["obs_layout_version"] not in SUPPORTED_OBS_LAYOUTS or m["obs_layout_version"] != league_obs.OBS_LAYOUT_VERSION:
            raise ValueError(f"this bot's code speaks observation layout {league_obs.OBS_LAYOUT_VERSION}, "
                             f"its weights layout {m['obs_layout_version']}")
        table = np.asarray(m["action_table"], dtype=np.float32)
        heads = m.get("head_sizes", [len(table)])
        if m["action_table_version"] not in SUPPORTED_ACTION_TABLES or m["action_table_version"] != league_actions.ACTION_TABLE_VERSION:
            raise ValueError("this bot's action table is not the one its weights were trained with")
        if len(heads) == 1 and not np.array_equal(table, league_actions.ACTION_TABLE):
            raise ValueError("this bot's action table is not the one its weights were trained with")
        if len(heads) > 1 and (table.shape != (int(np.prod(heads)), 8) or np.abs(table).max() > 1):
            raise ValueError("this bot's heads do not match its table of controls")

    # ------------------------------------------------------------------ episodes

    def reset(self) -> None:
        """A new league episode: fresh recurrent state, and the next packet chooses an action."""
        self.state = self.actor.initial_state(1)
        self.prev = np.zeros(8, np.float32)  # the controls last sent, for a network that reads them
        self.next_frame: int | None = None
        self.action: int | None = None
        self.preview: int | None = None
        self.last_obs: np.ndarray | None = None

    def prepare(self, field_info) -> None:
        """Match the field's boost pads to the league's order (raises ValueError on a non-soccar field)."""
        self._pad_order = pad_order(field_info)
        self._field = field_info

    # ------------------------------------------------------------------ observation

    def observation(self, packet, field_info, index: int) -> np.ndarray:
        """The league observation [196] of car `index` in this packet (league_obs.build_obs)."""
        if self._pad_order is None or field_info is not self._field:
            self.prepare(field_info)
        cars, teams = raw_cars(packet)
        score, seconds_left, overtime = raw_game(packet)
        rows = league_obs.build_obs(
            raw_ball(packet)[None], cars[None], teams[None], raw_pads(packet, self._pad_order)[None],
            score[None], np.array([seconds_left], dtype=np.float32), np.array([overtime]),
        )
        return rows[index]

    # ------------------------------------------------------------------ acting

    def _choose(self, obs: np.ndarray, commit: bool) -> int:
        """The joint action (a row of the table of controls): each head's choice, most significant first."""
        if self.actor.prev_controls:
            obs = np.concatenate([obs, self.prev])
        logits, state = self.actor.logits(obs[None], self.state)
        action = 0
        for size, head in zip(self._heads, np.split(logits[0], np.cumsum(self._heads)[:-1])):
            if self.deterministic:
                choice = int(np.argmax(head))
            else:
                z = (head.astype(np.float64) - head.max()) / self.temperature
                p = np.exp(z)
                choice = int(self.rng.choice(len(p), p=p / p.sum()))
            action = action * size + choice
        if commit:
            self.state = state
            self.prev = np.asarray(self._table[action], np.float32)
            self.decisions += 1
        return action

    def controls(self, action: int | None):
        """The ControllerState of an action index (neutral for None)."""
        if action is None:
            return self._controls()
        throttle, steer, pitch, yaw, roll, jump, boost, handbrake = self._table[action]
        return self._controls(throttle=throttle, steer=steer, pitch=pitch, yaw=yaw, roll=roll,
                              jump=jump > 0, boost=boost > 0, handbrake=handbrake > 0)

    def act(self, packet, field_info, index: int):
        """The controls for car `index` on this packet."""
        info = packet.match_info
        frame, phase = int(info.frame_num), int(info.match_phase)
        if index != self.index or (self.last_frame is not None and frame < self.last_frame):
            self.reset()  # another car, or a new match (the frame counter started again)
            self.index = index
        self.last_frame = frame
        kickoff = phase in KICKOFF_PHASES
        if kickoff and not self.in_kickoff:
            self.reset()  # the match start or a restart after a goal: a new league episode
        self.in_kickoff = kickoff
        if index >= len(packet.players) or len(packet.balls) == 0:
            return self.controls(None)
        if phase == PHASE_COUNTDOWN:
            if self.preview is None:  # what the policy will do at go, without advancing its state
                self.preview = self._choose(self.observation(packet, field_info, index), commit=False)
            return self.controls(self.preview)
        if phase not in PLAYING:
            return self.controls(None)
        if self.next_frame is None or frame >= self.next_frame:
            self.last_obs = self.observation(packet, field_info, index)
            self.action = self._choose(self.last_obs, commit=True)
            self.next_frame = frame + self.tick_skip
        return self.controls(self.action)
