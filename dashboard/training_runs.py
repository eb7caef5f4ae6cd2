"""Reading the metrics that training runs write (format: docs/training-metrics.md).

<league home>/runs/<run name>/metrics.jsonl holds one JSON object per line; `run.json` beside it
is optional metadata. A run being written is read as far as its last complete line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

METRICS_FILE = "metrics.jsonl"
RUN_INFO_FILE = "run.json"
NAMESPACES = ("charts", "losses", "eval", "distill", "panel")  # known key prefixes, shown in this order


@dataclass(frozen=True)
class RunFile:
    name: str
    path: Path
    size: int
    mtime: float


def list_runs(runs_dir: Path) -> list[RunFile]:
    """Runs with a metrics file, most recently written first."""
    if not runs_dir.is_dir():
        return []
    found = []
    for sub in runs_dir.iterdir():
        metrics = sub / METRICS_FILE
        if sub.is_dir() and metrics.is_file():
            st = metrics.stat()
            found.append(RunFile(sub.name, metrics, st.st_size, st.st_mtime))
    return sorted(found, key=lambda r: (-r.mtime, r.name))


@dataclass
class Metrics:
    frame: pd.DataFrame  # one row per record: step, time, seconds (since the first record), metric columns
    skipped_lines: int  # lines that were not a JSON object with a numeric step (e.g. one being written)

    @property
    def metric_names(self) -> list[str]:
        return sorted((c for c in self.frame.columns if c not in ("step", "time", "seconds")), key=metric_sort_key)


def metric_sort_key(name: str) -> tuple[int, str]:
    prefix = name.split("/", 1)[0]
    return (NAMESPACES.index(prefix) if prefix in NAMESPACES else len(NAMESPACES), name)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def read_metrics(path: Path) -> Metrics:
    """Parse a metrics.jsonl file: numeric fields only; bad or partial lines are counted, not fatal."""
    records, skipped = [], 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                skipped += 1
                continue
            if not isinstance(obj, dict) or _number(obj.get("step")) is None:
                skipped += 1
                continue
            records.append({k: v for k, v in ((k, _number(v)) for k, v in obj.items()) if v is not None})
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["step", "time", "seconds"])
    else:
        if "time" not in frame:
            frame["time"] = float("nan")
        frame = frame.sort_values("step", kind="stable").reset_index(drop=True)
        frame["seconds"] = frame["time"] - frame["time"].min()
    return Metrics(frame, skipped)


def read_run_info(run_dir: Path) -> dict[str, Any]:
    """The optional run.json object ({} when absent or unreadable)."""
    try:
        info = json.loads((run_dir / RUN_INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    return info if isinstance(info, dict) else {}


def long_form(frames: dict[str, pd.DataFrame], metrics: list[str], x: str, max_points: int = 2000) -> pd.DataFrame:
    """run, metric, x, value rows for charting several runs and metrics, each series thinned to
    at most `max_points` points."""
    parts = []
    for run, frame in frames.items():
        for metric in metrics:
            if metric not in frame:
                continue
            series = frame[[x, metric]].dropna()
            stride = max(1, math.ceil(len(series) / max_points))
            series = series.iloc[::stride]
            parts.append(pd.DataFrame({"run": run, "metric": metric, "x": series[x].to_numpy(),
                                       "value": series[metric].to_numpy()}))
    if not parts:
        return pd.DataFrame(columns=["run", "metric", "x", "value"])
    return pd.concat(parts, ignore_index=True)
