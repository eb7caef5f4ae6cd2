"""The self-play loop's episode statistics: returns, lengths, goals, touches and results per
opponent, accumulated with array operations over every env at once and handed over with each
rollout segment as a Tally (training.segment), which becomes the update's metrics row
(charts/...). The results per opponent also feed the payoff table (PFSP).
"""

from __future__ import annotations

import numpy as np

from arena.engine.vector import StepInfo
from training.opponents import OpponentPool
from training.segment import Tally

# The metrics kept in the registry (league runs, the dashboard), besides every win rate.
HEADLINE = ("charts/steps_per_second", "charts/episode_reward", "charts/episode_length", "charts/goals_for",
            "charts/goals_against", "losses/policy_loss", "losses/value_loss", "losses/entropy", "losses/approx_kl",
            "losses/clip_fraction", "losses/explained_variance", "charts/skipped_updates_total")


def headline(row: dict[str, float]) -> dict[str, float]:
    """The metrics of `row` kept in the registry: the headline ones and every win rate."""
    return {k: v for k, v in row.items() if k in HEADLINE or k.startswith("charts/win_rate/")}


class EpisodeStats:
    """Statistics of the learner's side: blue in even envs, orange in odd ones (training.selfplay's layout).

    `slot_env` [S]: the env of each learner row; `league_envs` [E_l]: the envs with a league
    opponent (the others are pure self-play); `teams` [N]: each runner row's team, env by env.
    `take()` hands over what was counted since the last take as a Tally (training.segment).
    """

    def __init__(self, n_envs: int, slot_env: np.ndarray, league_envs: np.ndarray, teams: np.ndarray):
        self.side = np.arange(n_envs) % 2
        self.slot_env = slot_env
        self.league_envs = league_envs
        self.learner_cars = teams.reshape(n_envs, -1) == self.side[:, None]  # [E, C] the learner side's cars
        self.env_group = np.full(n_envs, -1)  # opponent group of each env; -1: pure self-play
        self.opponents: list[tuple[str, int]] = []  # (name, envs it drives) of each opponent group
        self.returns = np.zeros(len(slot_env))
        self._kept: dict[str, list[float]] = {}  # counts against the opponents of pools replaced since the last take
        self._clear()

    def _clear(self) -> None:
        self.done_returns: list[float] = []
        self.lengths: list[float] = []
        self.goals_for = self.goals_against = self.touches = 0.0
        n = len(self.opponents)
        self.wins, self.draws, self.games = np.zeros(n), np.zeros(n), np.zeros(n)

    def set_pool(self, pool: OpponentPool) -> None:
        """A new opponent pool was drawn: results count against its groups from now on (what was
        counted against the old one is kept for the next take)."""
        kept = self._opponent_counts()
        self.env_group[:] = -1
        self.env_group[self.league_envs] = pool.env_opponent
        self.opponents = [(g.name, len(g.envs)) for g in pool.groups]
        n = len(self.opponents)
        self.wins, self.draws, self.games = np.zeros(n), np.zeros(n), np.zeros(n)
        self._kept = kept

    def _opponent_counts(self) -> dict[str, list[float]]:
        counts = {name: list(v) for name, v in self._kept.items()}
        for (name, envs), w, d, n in zip(self.opponents, self.wins.tolist(), self.draws.tolist(),
                                         self.games.tolist()):
            before = counts.get(name, [0.0, 0.0, 0.0, 0.0])
            counts[name] = [max(before[0], envs), before[1] + w, before[2] + d, before[3] + n]
        return counts

    def step(self, rewards: np.ndarray, info: StepInfo) -> None:
        """Add one runner step: `rewards` [S] of the learner rows, `info` the runner's."""
        self.returns += rewards
        envs = np.arange(len(self.side))
        self.goals_for += float(info.goals[envs, self.side].sum())
        self.goals_against += float(info.goals[envs, 1 - self.side].sum())
        self.touches += float((info.touches.reshape(len(envs), -1) > 0)[self.learner_cars].sum())
        done = info.done
        if done.any():
            done_slots = done[self.slot_env]
            self.done_returns.extend(self.returns[done_slots].tolist())
            self.returns[done_slots] = 0.0
            finished = np.flatnonzero(done)
            self.lengths.extend(info.episode_seconds[finished].tolist())
            finished = finished[self.env_group[finished] >= 0]  # results against league opponents
            ours = info.episode_score[finished, self.side[finished]]
            theirs = info.episode_score[finished, 1 - self.side[finished]]
            groups = self.env_group[finished]
            np.add.at(self.wins, groups, (ours > theirs).astype(float))
            np.add.at(self.draws, groups, (ours == theirs).astype(float))
            np.add.at(self.games, groups, 1.0)

    def take(self) -> Tally:
        """What was counted since the last take (episodes, goals, touches, results per opponent)."""
        tally = Tally(self.goals_for, self.goals_against, self.touches, self.done_returns, self.lengths,
                      envs=len(self.side), self_play_envs=int(np.sum(self.env_group < 0)),
                      opponents=self._opponent_counts())
        self._kept = {}
        self._clear()
        return tally
