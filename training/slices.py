"""One driver for chunked training: curriculum stages, league roles and probes train in slices of the
self-play trainer, and this is the one place a slice is run.

A chunked command loads each stage's or role's config once (training.slice_spec.item_config); a
slice is that config with what changes per slice handed over typed: its seed (`dataclasses.replace`),
its budget (a training.budget.Budget, what is left of the command's clock), a best-response target,
a pool of extra opponents, a mix. `train_slice` resumes the run from its latest snapshot (or starts
it, from `init_from`'s weights or fresh), trains the slice, and hands back the trainer's result; the
drivers record it (a stage's steps, a role's seconds) through `on_progress` and `on_end`.

    s = Slice("roles-main", dataclasses.replace(cfg, seed=seed), Budget(seconds=300.0), pool=league_pool)
    result = train_slice(home, registry, s, on_progress)   # Interrupted on Ctrl-C, the snapshot saved
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from league.config import Config, OpponentMix
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry
from training.budget import Budget
from training.progress import OnProgress

if TYPE_CHECKING:
    from training.selfplay import TrainResult


class Interrupted(Exception):
    """A chunked run stops here (Ctrl-C in a slice, or its time budget); everything written so far is kept.
    `result`: the slice's, when Ctrl-C ended one (its final snapshot saved)."""

    def __init__(self, message: str, result: TrainResult | None = None):
        super().__init__(message)
        self.result = result


@dataclass(frozen=True)
class Slice:
    """One slice of a run: its config (the stage's or role's, its seed replaced) and the typed values of the call."""

    run: str  # the run's name; its latest snapshot, if any, is resumed
    cfg: Config
    budget: Budget
    init_from: str | None = None  # a new run's first weights (ignored once the run has a snapshot)
    target: str | None = None  # a best response to this agent, in every env
    pool: Callable[[], list[str]] | None = None  # extra past and PFSP candidates, read at every draw
    mix: OpponentMix | None = None  # the opponent mix in place of the config's
    snapshot_status: str = "active"  # retired: a probe's snapshots, never in any pool


def check_not_taken(registry: Registry, run: str, owner: str, how: str = "") -> None:
    """A run a new curriculum or league (`owner`) is to train must not hold versions it did not train (`how`:
    how to give it another name)."""
    if (latest := registry.agent_store.latest_version(run)) is not None:
        raise LeagueError(f"Run {run!r} already has versions (latest {latest!r}) that this {owner} did not train; "
                          f"give the {owner} another name{how}.")


def train_slice(home: LeagueHome, registry: Registry, s: Slice, on_progress: OnProgress | None = None,
                on_end: Callable[[], None] | None = None) -> TrainResult:
    """Train slice `s`: resume its run from the latest snapshot (or start it), spend the budget, snapshot.
    `on_end` runs however the slice ends (a driver's record of it). Interrupted when Ctrl-C ended it."""
    from training.selfplay import SelfPlayTrainer  # torch: only when something trains

    cfg = s.cfg if s.mix is None else dataclasses.replace(s.cfg, training=dataclasses.replace(s.cfg.training,
                                                                                              opponents=s.mix))
    latest = registry.agent_store.latest_version(s.run)
    try:
        trainer = SelfPlayTrainer(cfg, home, registry, name=None if latest else s.run, resume=latest,
                                  init_from=None if latest else s.init_from, on_progress=on_progress,
                                  snapshot_status=s.snapshot_status)
        result = trainer.run(s.budget, target=s.target, pool=s.pool)
    finally:
        if on_end is not None:
            on_end()
    if result.interrupted:
        raise Interrupted("interrupted (final snapshot saved)", result)
    return result
