"""Training runs: each run's latest headline metrics (the whole series is in <home>/runs/)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from league.stores.database import Store, utc_now


@dataclass(frozen=True)
class TrainingRun:
    """A training run's latest headline metrics."""

    run: str
    team_size: int
    started: str
    updated: str
    steps: int
    metrics_json: str

    @property
    def metrics(self) -> dict[str, float]:
        return json.loads(self.metrics_json)


class RunStore(Store):
    def record(self, run: str, team_size: int, steps: int, metrics: dict[str, float]) -> None:
        """Keep a training run's latest headline metrics (merged over earlier ones)."""
        with self.transaction():
            rows = list(self.db.query("SELECT metrics_json FROM training_runs WHERE run = ?", [run]))
            merged = {**(json.loads(rows[0]["metrics_json"]) if rows else {}), **metrics}
            now = utc_now()
            self.db.execute(
                """INSERT INTO training_runs (run, team_size, started, updated, steps, metrics_json)
                   VALUES (?, ?, ?, ?, ?, ?)
                   ON CONFLICT (run) DO UPDATE SET updated = excluded.updated, steps = excluded.steps,
                       metrics_json = excluded.metrics_json""",
                [run, team_size, now, now, steps, json.dumps(merged, sort_keys=True)])

    def all(self) -> list[TrainingRun]:
        return [TrainingRun(**r) for r in self.db.query("SELECT * FROM training_runs ORDER BY updated DESC")]
