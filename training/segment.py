"""What collection hands the learner: one rollout segment of T steps for S learner slots, and
the episode tallies that came with it.

Every collection backend (training.collection) produces Segments of plain numpy arrays, so a
segment crosses a thread, a process or a Ray object store unchanged; segments of several
rollout workers merge along the slot axis into the one the learner updates on.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from league.registry import PayoffRecord
from league.results import score_rate

LATEST_FROZEN = "latest-frozen"  # how a metrics row labels the opponent pool's LATEST (training.opponents)


@dataclass
class Tally:
    """Episode statistics of the learner's side over a stretch of collection; tallies add up.

    `opponents[name] = [envs, wins, draws, games]`: how many envs that opponent drove and the
    learner's results against it.
    """

    goals_for: float = 0.0
    goals_against: float = 0.0
    touches: float = 0.0
    returns: list[float] = field(default_factory=list)  # finished episodes' learner returns
    lengths: list[float] = field(default_factory=list)  # finished episodes' lengths in seconds
    envs: int = 0
    self_play_envs: int = 0
    opponents: dict[str, list[float]] = field(default_factory=dict)

    def __add__(self, other: Tally) -> Tally:
        opponents = {name: list(v) for name, v in self.opponents.items()}
        for name, v in other.opponents.items():
            opponents[name] = [a + b for a, b in zip(opponents.get(name, [0.0] * 4), v)]
        return Tally(self.goals_for + other.goals_for, self.goals_against + other.goals_against,
                     self.touches + other.touches, self.returns + other.returns, self.lengths + other.lengths,
                     self.envs + other.envs, self.self_play_envs + other.self_play_envs, opponents)

    def results(self) -> dict[str, PayoffRecord]:
        """The learner's results against each opponent, by name."""
        return {name: PayoffRecord(w, d, n) for name, (_, w, d, n) in self.opponents.items()}

    def row(self) -> dict[str, float]:
        """The tally as metrics: episodes, goals, touches, opponent shares and win rates."""
        row: dict[str, float] = {"charts/goals_for": self.goals_for, "charts/goals_against": self.goals_against,
                                 "charts/touches": self.touches}
        if self.returns:
            row["charts/episode_reward"] = float(np.mean(self.returns))
            row["charts/episode_length"] = float(np.mean(self.lengths))
            row["charts/episodes"] = float(len(self.returns))
        envs = max(self.envs, 1)
        row["charts/opponent_share/self-play"] = self.self_play_envs / envs
        for name, (n_envs, w, d, n) in self.opponents.items():
            label = LATEST_FROZEN if name.startswith("<") else name
            row[f"charts/opponent_share/{label}"] = n_envs / envs
            if n:
                row[f"charts/win_rate/{label}"] = score_rate(w, d, n)  # the key keeps its old name
        return row


@dataclass
class Segment:
    """T steps of S learner slots, collected with the weights of update `version`.

    obs [T, S, D], actions/logprobs/values/rewards/episode_starts [T, S]; teacher_probs [T, S, L]
    while a teacher labels the states (kickstarting, distilling): its action distribution in the
    learner's action space, each head's probabilities side by side (agents.action_spaces); hidden [T, 2, S, H]: the LSTM state before each step (recurrent
    policies); next_obs [S, D], next_starts [S] and next_hidden [2, S, H]: where collection
    stopped, to bootstrap the value from.
    """

    obs: np.ndarray
    actions: np.ndarray
    logprobs: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    episode_starts: np.ndarray
    next_obs: np.ndarray
    next_starts: np.ndarray
    version: int  # the learner update whose weights collected it
    tally: Tally
    teacher_probs: np.ndarray | None = None
    hidden: np.ndarray | None = None
    next_hidden: np.ndarray | None = None
    inference_seconds: float = 0.0  # of the collection time, what the policies' forward passes took
    collection_seconds: float = 0.0  # the whole collection, inference included
    # Where each collector's time went, one {phase: seconds} per collector (rollout worker) in slot order
    # (training.collector.Collector.collect; read by `league diagnose --test scale`).
    phases: list[dict[str, float]] = field(default_factory=list)

    @property
    def steps(self) -> int:
        """Agent steps in the segment."""
        return int(self.actions.size)


def merge(segments: list[Segment]) -> Segment:
    """Segments of equal length from several rollout workers as one, slots in the given order."""
    if len(segments) == 1:
        return segments[0]

    def cat(name: str, axis: int) -> np.ndarray | None:
        parts = [getattr(s, name) for s in segments]
        return None if parts[0] is None else np.concatenate(parts, axis=axis)

    tally = Tally()
    for s in segments:
        tally = tally + s.tally
    return Segment(obs=cat("obs", 1), actions=cat("actions", 1), logprobs=cat("logprobs", 1),
                   values=cat("values", 1), rewards=cat("rewards", 1), episode_starts=cat("episode_starts", 1),
                   next_obs=cat("next_obs", 0), next_starts=cat("next_starts", 0),
                   version=min(s.version for s in segments), tally=tally,
                   teacher_probs=cat("teacher_probs", 1), hidden=cat("hidden", 2), next_hidden=cat("next_hidden", 1),
                   inference_seconds=max(s.inference_seconds for s in segments),
                   collection_seconds=max(s.collection_seconds for s in segments),
                   phases=[p for s in segments for p in s.phases])
