"""Where a training run's numbers go: runs/<run>/metrics.jsonl (read by the dashboard, format in
docs/training-metrics.md) and, when the tensorboard package is installed, TensorBoard scalars
in the same folder."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any


class MetricsLog:
    def __init__(self, run_dir: Path, run_info: dict[str, Any] | None = None):
        self.run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        if run_info is not None:
            (run_dir / "run.json").write_text(json.dumps(run_info, indent=2, sort_keys=True, default=str))
        self._file = open(run_dir / "metrics.jsonl", "a", encoding="utf-8")
        self._tb = None
        try:
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(log_dir=str(run_dir / "tensorboard"))
        except ImportError:  # tensorboard is optional
            pass

    def write(self, step: int, values: dict[str, float]) -> None:
        clean = {k: float(v) for k, v in values.items() if isinstance(v, (int, float)) and math.isfinite(v)}
        self._file.write(json.dumps({"step": int(step), "time": time.time(), **clean}) + "\n")
        self._file.flush()
        if self._tb is not None:
            for key, value in clean.items():
                self._tb.add_scalar(key, value, step)

    def close(self) -> None:
        self._file.close()
        if self._tb is not None:
            self._tb.close()


RUN_FILES = ("metrics.jsonl", "run.json", "tensorboard")  # what MetricsLog writes into a run's folder
CPU_MINUTES = "charts/cpu_minutes"  # the run's CPU-minutes so far, over every call of it (resumed ones too)


def logged_cpu_minutes(run_dir: Path) -> float:
    """The CPU-minutes a run's log says it has spent (the largest `charts/cpu_minutes`, or `panel/cpu_minutes` in a
    log written before that key): where a resumed call's clock starts, so a run's learning curve goes on from its
    earlier calls rather than starting again at zero. 0 for a run with no log; a torn last line is skipped."""
    metrics = run_dir / "metrics.jsonl"
    if not metrics.is_file():
        return 0.0
    spent = 0.0
    with open(metrics, encoding="utf-8") as f:
        for line in f:
            if "cpu_minutes" not in line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(row, dict):  # not a metrics row (docs/training-metrics.md): skipped, as the page does
                continue
            for key in (CPU_MINUTES, "panel/cpu_minutes"):
                value = row.get(key)
                if isinstance(value, (int, float)) and math.isfinite(value):
                    spent = max(spent, float(value))
    return spent


def set_aside_stopped(run_dir: Path) -> Path | None:
    """Move the log of a run that was stopped before its first snapshot (nothing of it can be resumed) into
    run_dir/stopped-N, so the run started again under its name logs alone and nothing is lost. Returns that
    folder, or None when there was no such log."""
    metrics = run_dir / "metrics.jsonl"
    if not metrics.is_file() or metrics.stat().st_size == 0:
        return None
    n = 1
    while (run_dir / f"stopped-{n}").exists():
        n += 1
    aside = run_dir / f"stopped-{n}"
    aside.mkdir()
    for name in RUN_FILES:
        if (run_dir / name).exists():
            (run_dir / name).rename(aside / name)
    return aside
