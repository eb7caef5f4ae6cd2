"""`league roles [NAME]` (a league of roles: each role, its restarts and its checks against its targets), and
the progress display of `league train --league FILE`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from league.cli.common import HomeOpt, LineTicker, check_minutes, handles_errors, open_league, out


def run_league_with_progress(home, file: Path, *, name: str | None, config: Path | None, minutes: float | None,
                             overrides: dict[str, Any], sets: list[str] | None) -> None:
    """Run (or resume) a league of roles, one progress line per role's slice, then print where it stands."""
    from league.registry import Registry
    from training.launch import run_league

    check_minutes(minutes, leave_out="train until Ctrl-C")
    result = run_league(home, file, name=name, user_file=config, minutes=minutes, overrides=overrides, sets=sets,
                        on_event=_printer())
    colour = {"stopped": "green", "interrupted": "yellow"}.get(result.status, "red")
    out.print(f"League {result.name} [{colour}]{result.status}[/]: {result.message}.", highlight=False)
    registry = Registry.open(home.db_path, readonly=True)
    try:
        out.print(_roles_table(registry, result.name))
    finally:
        registry.close()


def _printer():
    """The league's event callback: a line per slice started and per check, a line of progress every few seconds."""
    from training.progress import Note, UpdateDone
    from training.roles import RoleChecked, RoleProgress, SliceStarted

    ticker = LineTicker()

    def on_event(event) -> None:
        if isinstance(event, SliceStarted):
            against = f" against {event.target}" if event.target else ""
            start = f"from {event.resume}" if event.resume else "a new run"
            out.print(f"{event.role} ({event.kind}): {event.minutes:.1f} min of {event.run}, {start}{against}",
                      highlight=False)
        elif isinstance(event, RoleProgress) and isinstance(event.event, Note):
            out.print(f"  {event.event.text}", highlight=False)
        elif isinstance(event, RoleProgress) and isinstance(event.event, UpdateDone) and ticker.due():
            u = event.event
            out.print(f"  {event.role}: {u.steps:,} steps in this slice, {u.steps_per_second:,.0f} steps/s, "
                      f"{u.elapsed:.0f} s", highlight=False)
        elif isinstance(event, RoleChecked):
            c = event.check
            verdict = {"won": f"reset: won {c.win_rate:.0%} (at least {event.threshold:.0%}); next run "
                              f"{event.next_run}",
                       "steps": f"reset: the restart has trained {c.steps:,} steps; next run {event.next_run}"}
            out.print(f"  check of {c.agent} against {', '.join(c.targets)}: {c.wins}-{c.draws}-{c.losses} (W-D-L), "
                      f"{verdict.get(c.reset, 'goes on')}", highlight=False)

    return on_event


@handles_errors
def roles_command(
    name: Annotated[Optional[str], typer.Argument(help="League name (default: the most recently started).",
                                                  show_default=False)] = None,
    history: Annotated[int, typer.Option("--history", help="Exploiter checks to list (most recent last).", min=0)] = 10,
    home: HomeOpt = None,
) -> None:
    """Show a league of roles: each role's share of the time, its run, restarts and its last check against its
    targets, and the exploiters' checks.

    Example: league roles roles --history 20
    """
    _, reg = open_league(home, readonly=True)
    names = reg.role_store.names()
    if name is None:
        if not names:
            out.print("No league of roles has run here yet; start one with "
                      "`league train --league configs/league-roles.yaml --minutes 60`.")
            return
        name = names[-1]
    league = reg.role_store.get(name)
    out.print(f"League [bold]{name}[/] ({league.source}, {league.team_size}v{league.team_size}): {league.status}"
              + (f" — {league.message}" if league.message else ""), highlight=False)
    out.print(_roles_table(reg, name))
    checks = reg.role_store.checks(name)
    if history and checks:
        table = Table(title=f"Exploiter checks (last {min(history, len(checks))} of {len(checks)})")
        for col in ("checked", "role", "restart", "agent", "steps", "against", "W-D-L", "win rate", "reset"):
            table.add_column(col, justify="right" if col in ("restart", "steps", "win rate") else "left")
        for c in checks[-history:]:
            table.add_row(c.created[:19].replace("T", " "), c.role, str(c.restart), c.agent, f"{c.steps:,}",
                          ", ".join(c.targets), f"{c.wins}-{c.draws}-{c.losses}", f"{c.win_rate:.0%}", c.reset or "-")
        out.print(table)


def _roles_table(reg, name: str) -> Table:
    """Each role: kind, share of the time (wanted and had), current run and latest snapshot, restarts, last check."""
    league = reg.role_store.get(name)
    spec_roles = {r["name"]: r for r in league.spec.get("roles", [])}
    roles = reg.role_store.roles(name)
    checks = reg.role_store.checks(name)
    total_share = sum(r.get("share", 1.0) for r in spec_roles.values()) or 1.0
    total_seconds = sum(r.seconds for r in roles) or 1.0
    table = Table(title="Roles")
    for col in ("role", "kind", "time (share)", "run", "latest snapshot", "steps", "restarts", "resets",
                "last check"):
        table.add_column(col, justify="right" if col in ("steps", "restarts") else "left")
    for r in roles:
        latest = reg.agent_store.latest_version(r.run)
        steps = reg.agent_store.get(latest).steps_trained if latest else 0
        mine = [c for c in checks if c.role == r.role]
        resets = [c.reset for c in mine if c.reset]
        reset_text = ", ".join(f"{resets.count(k)} {k}" for k in ("won", "steps") if k in resets) or "-"
        last = (f"{mine[-1].wins}-{mine[-1].draws}-{mine[-1].losses} vs {', '.join(mine[-1].targets)} "
                f"({mine[-1].win_rate:.0%})" if mine else "-")
        wanted = spec_roles.get(r.role, {}).get("share", 1.0) / total_share
        table.add_row(r.role, r.kind, f"{r.seconds / 60:.1f} min ({r.seconds / total_seconds:.0%}, wanted {wanted:.0%})",
                      r.run, latest or "-", f"{steps:,}", str(r.restart - 1), reset_text, last)
    return table
