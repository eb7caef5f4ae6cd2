"""The climb: how each version of a training run did in its evaluation games against each
baseline, over the steps it was trained (the dashboard's chart, the learning benchmark's curve)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlite_utils

from league.results import Record
from league.stores.agents import BASELINES


@dataclass(frozen=True, kw_only=True)
class ClimbPoint(Record):
    """A version's record (league.results) against one baseline."""

    version: str  # RUN-vK
    k: int
    steps: int  # the version's steps_trained
    baseline: str


def climb(db: sqlite_utils.Database, run: str, baselines: Sequence[str] = tuple(BASELINES)) -> list[ClimbPoint]:
    """One point per (version of run `run`, baseline it played in evaluation games), ordered by
    steps, then version, then baseline in the order of `baselines`. The versions are the agents
    named RUN-v1, RUN-v2, ...; tournament and manual games are left out: evaluation games are
    the ones training plays as it goes."""
    if not baselines:
        return []
    prefix = f"{run}-v"
    rows = db.query(f"""
        WITH versions AS (
            SELECT id, name, steps_trained, CAST(substr(name, :n + 1) AS INTEGER) AS k FROM agents
            WHERE substr(name, 1, :n) = :prefix AND length(name) > :n AND substr(name, :n + 1) NOT GLOB '*[^0-9]*'),
        sides AS (
            SELECT v.id AS a, g.orange_agent_id AS b,
                   CASE g.result WHEN 'blue' THEN 1 WHEN 'draw' THEN 0 ELSE -1 END AS r
            FROM versions v JOIN games g ON g.blue_agent_id = v.id WHERE g.origin = 'evaluation'
            UNION ALL
            SELECT v.id, g.blue_agent_id, CASE g.result WHEN 'orange' THEN 1 WHEN 'draw' THEN 0 ELSE -1 END
            FROM versions v JOIN games g ON g.orange_agent_id = v.id WHERE g.origin = 'evaluation')
        SELECT v.name AS version, v.k, v.steps_trained AS steps, o.name AS baseline,
               SUM(r = 1) AS wins, SUM(r = 0) AS draws, SUM(r = -1) AS losses
        FROM sides JOIN versions v ON v.id = sides.a JOIN agents o ON o.id = sides.b
        WHERE o.name IN ({", ".join(f":b{i}" for i in range(len(baselines)))})
        GROUP BY v.id, o.id""", {"n": len(prefix), "prefix": prefix,
                                 **{f"b{i}": name for i, name in enumerate(baselines)}})
    order = {name: i for i, name in enumerate(baselines)}
    points = [ClimbPoint(**row) for row in rows]
    return sorted(points, key=lambda p: (p.steps, p.k, order[p.baseline]))
