"""The dashboard's reading of leagues of roles (`league train --league FILE`, docs/league-roles.md) and of
exploitability probes (`league probe NAME`): through the role and probe stores (league.stores.roles,
league.stores.probes), as frames for the Roles page; the queries the page calls are `@cached_query`
(dashboard/data.py), no other Streamlit here.

A role's runs: its current run is the role's row; an exploiter's earlier restarts ran as the same name
with `-r<k>` for k = 1 .. restart - 1 (training.roles_spec.RolesSpec.run_name), and a run's snapshots are
the agents named RUN-v1, RUN-v2, ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from dashboard.data import cached_query
from league.names import split_version
from league.ratings import wilson_interval
from league.registry import Registry
from league.stores.roles import LeagueRun

CHECK_COLUMNS = ["id", "created", "role", "restart", "agent", "steps", "against", "games", "wins", "draws", "losses",
                 "win_rate", "win_low", "win_high", "reset"]
PROBE_COLUMNS = ["created", "target", "run", "target_steps", "probe", "start", "team_size", "minutes", "steps", "games",
                 "wins", "draws", "losses", "win_rate", "win_low", "win_high"]
RUN_COLUMNS = ["role", "kind", "restart", "run", "snapshots", "latest", "steps", "ended"]


@dataclass(frozen=True)
class RolesView:
    """One league of roles as the page shows it."""

    league: LeagueRun
    roles: pd.DataFrame  # role, kind, share (wanted, 0..1), had (0..1 of the seconds trained), minutes, restarts,
    #                      resets_won, resets_steps, run (current), reset_win_rate (exploiters; NaN for main)
    runs: pd.DataFrame  # RUN_COLUMNS: every run of every role, restarts in order
    checks: pd.DataFrame  # CHECK_COLUMNS, oldest first


@cached_query
def role_leagues(reg: Registry) -> list[str]:
    """The leagues of roles, most recently started last (none on a home older than schema version 11)."""
    return reg.role_store.names()


def run_snapshots(reg: Registry, runs: Sequence[str]) -> dict[str, list[tuple[int, str, int]]]:
    """Each run's snapshots as (k, name, steps_trained), oldest first."""
    return {run: [(k, a.name, int(a.steps_trained)) for k, a in versions]
            for run, versions in reg.agent_store.versions(runs).items()}


def role_runs(current: str, restart: int) -> list[str]:
    """The runs of a role now at `current` after `restart` restarts: one per restart, in order."""
    suffix = f"-r{restart}"
    if restart <= 1 or not current.endswith(suffix):
        return [current]
    stem = current[: -len(suffix)]
    return [f"{stem}-r{k}" for k in range(1, restart + 1)]


@cached_query
def roles_view(reg: Registry, name: str) -> RolesView:
    """League `name`'s roles, runs and exploiter checks (LeagueError if there is no such league)."""
    store = reg.role_store
    league = store.get(name)
    spec_roles = {r.get("name"): r for r in league.spec.get("roles", []) if isinstance(r, dict)}
    states = store.roles(name)
    checks = store.checks(name)
    total_share = sum(float(spec_roles.get(r.role, {}).get("share", 1.0)) for r in states) or 1.0
    total_seconds = sum(r.seconds for r in states)
    runs_of = {r.role: role_runs(r.run, r.restart) for r in states}
    snapshots = run_snapshots(reg, [run for runs in runs_of.values() for run in runs])
    roles, runs = [], []
    for r in states:
        spec = spec_roles.get(r.role, {})
        resets = [c.reset for c in checks if c.role == r.role and c.reset]
        roles.append({"role": r.role, "kind": r.kind, "share": float(spec.get("share", 1.0)) / total_share,
                      "had": r.seconds / total_seconds if total_seconds else 0.0, "minutes": r.seconds / 60.0,
                      "restarts": r.restart - 1, "resets_won": resets.count("won"),
                      "resets_steps": resets.count("steps"), "run": r.run,
                      "reset_win_rate": float(spec["reset_win_rate"]) if r.kind != "main" and "reset_win_rate" in spec
                      else float("nan")})
        for k, run in enumerate(runs_of[r.role], start=1):
            versions = snapshots.get(run, [])
            ended = [c.reset for c in checks if c.role == r.role and c.restart == k and c.reset]
            runs.append({"role": r.role, "kind": r.kind, "restart": k, "run": run, "snapshots": len(versions),
                         "latest": versions[-1][1] if versions else None,
                         "steps": versions[-1][2] if versions else 0,
                         "ended": f"reset ({ended[-1]})" if ended else "current" if run == r.run else ""})
    rows = []
    for i, c in enumerate(checks, start=1):
        low, high = wilson_interval(c.wins, c.games)  # as a probe's (league.probes.ProbeResult.interval)
        rows.append({"id": i, "created": c.created, "role": c.role, "restart": c.restart, "agent": c.agent,
                     "steps": c.steps, "against": ", ".join(c.targets), "games": c.games, "wins": c.wins,
                     "draws": c.draws, "losses": c.losses, "win_rate": c.win_rate, "win_low": low, "win_high": high,
                     "reset": c.reset})
    checks_frame = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    checks_frame["created"] = pd.to_datetime(checks_frame["created"], utc=True, format="ISO8601")
    return RolesView(league, pd.DataFrame(roles), pd.DataFrame(runs, columns=RUN_COLUMNS), checks_frame)


@cached_query
def probes(reg: Registry, targets_of: Sequence[str] | None = None) -> pd.DataFrame:
    """Every exploitability probe, oldest first (or those whose target is a snapshot of one of the runs
    `targets_of`), with its win rate and 95% Wilson interval (league.probes.ProbeResult), the target's
    run (RUN of RUN-vN; the target's name otherwise) and steps trained. Empty on a home older than the
    probes table (schema version 10)."""
    rows = []
    for stored in reg.probe_store.all():
        result = stored.result
        version = split_version(result.target)
        run = version[0] if version else result.target
        if targets_of is not None and run not in targets_of:
            continue
        low, high = result.interval
        rows.append({"created": stored.created, "target": result.target, "run": run,
                     "target_steps": stored.target_steps,
                     "probe": result.probe, "start": result.start or "fresh", "team_size": result.team_size,
                     "minutes": result.minutes, "steps": result.steps, "games": result.games, "wins": result.wins,
                     "draws": result.draws, "losses": result.losses, "win_rate": result.win_rate, "win_low": low,
                     "win_high": high})
    frame = pd.DataFrame(rows, columns=PROBE_COLUMNS)
    frame["created"] = pd.to_datetime(frame["created"], utc=True, format="ISO8601")
    return frame
