"""The `league` command: one module per command group, registered here.

    common.py      consoles, options, handles_errors (LeagueError -> one sentence, exit 2), open_league
    agents.py      init, agents, show, promote, retire, reactivate, prune, leaderboard, lineage
    crown.py       crown (the title decided by a round robin)
    io.py          import, export (a checkpoint, or an RLBot bot folder), average (a model soup)
    bot.py         bot add, bot list (community bots from the RLBot botpack)
    train.py       train (one self-play run, or --curriculum)
    probe.py       probe (an exploitability probe: a best response trained against one agent)
    roles.py       roles (a league of roles), and the progress display of train --league
    curriculum.py  curriculum status, and the progress display of train --curriculum
    tournament.py  tournament
    match.py       match (mirrored pairs until an SPRT decides)
    gauntlet.py    gauntlet (one agent against each strong agent, a fixed match each)
    ratings.py     ratings rebuild (the stored ratings recomputed from the recorded games)
    bench.py       bench env, bench tournament, bench train
    diagnose.py    diagnose
    dashboard.py   dashboard
    watch.py       watch (a game played at the speed of its clock, shown live)
    replay.py      replay play (a replay sent to an external viewer)

A command parses its options, opens the league, calls one library function, and formats what
it returns; its LeagueError becomes one sentence on stderr and exit code 2. This package is
the only code that imports typer (or draws rich tables and progress bars) and the one layer
that may import every package, always inside the command functions, so `league agents`
starts without torch, RocketSim or streamlit.
"""

from __future__ import annotations

import signal
import sys

import typer

from league.cli import agents, bench, bot, crown, curriculum, dashboard, diagnose, gauntlet, io, match, probe, ratings, replay, roles, tournament, train, watch

app = typer.Typer(
    name="league",
    help="Self-play league manager with tournament evaluation for Rocket League bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

app.command("init")(agents.init)
app.command("agents")(agents.list_agents)
app.command("show")(agents.show)
app.command("promote")(agents.promote)
app.command("crown")(crown.crown_command)
app.command("retire")(agents.retire)
app.command("reactivate")(agents.reactivate)
app.command("prune")(agents.prune)
app.command("leaderboard")(agents.leaderboard)
app.command("lineage")(agents.lineage)
app.command("train")(train.train_command)
app.command("tournament")(tournament.tournament_command)
app.command("match")(match.match_command)
app.command("gauntlet")(gauntlet.gauntlet_command)
app.command("dashboard")(dashboard.dashboard_command)
app.command("import")(io.import_agent)
app.command("export")(io.export_agent)
app.command("average")(io.average_agents)
app.command("diagnose")(diagnose.diagnose_command)
app.command("probe")(probe.probe_command)
app.command("roles")(roles.roles_command)
app.command("watch")(watch.watch_command)
app.command("league-status", hidden=True)(roles.roles_command)  # the name for `league roles`
app.add_typer(bench.app, name="bench")
app.add_typer(bot.app, name="bot")
app.add_typer(curriculum.app, name="curriculum")
app.add_typer(ratings.app, name="ratings")
app.add_typer(replay.app, name="replay")


def main() -> None:
    """Console-script entry point. SIGTERM (`kill PID`, a service manager's stop) stops a command as Ctrl-C does, so a
    run keeps its final snapshot and a contest says how to resume: run te, started with nohup (where Ctrl-C is
    ignored), could only be ended by SIGTERM, which ended it without a word."""
    signal.signal(signal.SIGTERM, _stop_as_ctrl_c)
    sys.exit(app())


def _stop_as_ctrl_c(signum, frame) -> None:
    raise KeyboardInterrupt
