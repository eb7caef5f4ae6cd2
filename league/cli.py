"""The `league` command. Each command opens the league, calls one library function and turns
its LeagueError into one sentence on stderr with exit code 2.

Heavy packages (torch, rlgym, streamlit) are imported inside the commands that need them,
so `league agents` starts fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.tree import Tree

from league.cli_common import (
    ConfigOpt,
    HomeOpt,
    StageOpt,
    handles_errors,
    open_league,
    out,
    team_size_of,
)
from league.errors import LeagueError

app = typer.Typer(
    name="league",
    help="Self-play league manager with tournament evaluation for Rocket League bots.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
# --------------------------------------------------------------------------- init


@app.command()
@handles_errors
def init(home: HomeOpt = None, config: ConfigOpt = None) -> None:
    """Create a league home with its database and the baseline agents `random` and `rule`.

    With --config, the file is validated and kept as the league's own config layer
    (<home>/config.yaml), used by every later command on this league.

    Example: league init --home ./my-league --config my-ratings.yaml
    """
    import os
    import shutil

    from league.config import load_config
    from league.home import resolve_home
    from league.registry import Registry

    league_home = resolve_home(home)
    if config is not None:
        load_config(home_file=config)  # validate it as a home layer (which may not pin the stage)
    cfg = load_config(user_file=config, home_file=league_home.config_path)
    existed = league_home.exists()
    league_home.create_root()
    # The database first: a read-only home or another application's database is refused before
    # anything else is written into the folder.
    registry = Registry.create(league_home.db_path, cfg.ratings)
    try:
        league_home.create_dirs()
        if config is not None:
            # Through a temporary file: a copy cut short (a full disk) never replaces the league's config.
            partial = league_home.config_path.with_name(f".{league_home.config_path.name}.{os.getpid()}.tmp")
            try:
                shutil.copyfile(config, partial)
                os.replace(partial, league_home.config_path)
            except OSError as exc:
                raise LeagueError(f"Cannot write {league_home.config_path}: {exc.strerror}; "
                                  "the league's config is unchanged.") from None
            finally:
                partial.unlink(missing_ok=True)
    finally:
        registry.close()
    verb = "Already initialised" if existed else "Created"
    out.print(f"{verb} league at {league_home.root}", highlight=False)


# --------------------------------------------------------------------------- agents


@app.command("agents")
@handles_errors
def list_agents(
    home: HomeOpt = None,
    stage: StageOpt = None,
    all_: Annotated[bool, typer.Option("--all", help="Include retired agents.")] = False,
) -> None:
    """List the league's agents (retired ones only with --all).

    Example: league agents --stage 1v1 --all
    """
    _, reg = open_league(home, readonly=True)
    agents = reg.agents(team_size_of(stage), include_retired=all_)
    by_id = {a.id: a.name for a in reg.agents(include_retired=True)}
    table = Table(title=f"Agents{f' ({stage})' if stage else ''}")
    for col in ("name", "kind", "stage", "status", "parent", "steps", "created"):
        table.add_column(col, justify="right" if col == "steps" else "left")
    for a in agents:
        table.add_row(a.name, a.kind, a.stage, a.status, by_id.get(a.parent_id, "") if a.parent_id else "",
                      f"{a.steps_trained:,}", a.created[:19].replace("T", " "))
    out.print(table)


@app.command()
@handles_errors
def show(name: Annotated[str, typer.Argument(help="Agent name.")], home: HomeOpt = None) -> None:
    """Show one agent: metadata, ratings per stage, parent and children.

    Example: league show rule
    """
    from league.lineage import lineage_of

    _, reg = open_league(home, readonly=True)
    agent = reg.agent(name)
    graph = lineage_of(reg)
    parent = reg.agent_by_id(agent.parent_id).name if agent.parent_id else "-"
    children = ", ".join(sorted(graph.successors(name))) or "-"
    info = Table.grid(padding=(0, 2))
    info.add_column(style="bold")
    info.add_column()
    for key, value in (
        ("name", agent.name), ("kind", agent.kind), ("stage", agent.stage), ("status", agent.status),
        ("parent", parent), ("children", children), ("created", agent.created),
        ("steps trained", f"{agent.steps_trained:,}"), ("checkpoint", agent.checkpoint_path or "-"),
        ("sha256", agent.checkpoint_sha256 or "-"), ("notes", agent.notes or "-"),
    ):
        info.add_row(key, value)
    out.print(info)
    ratings = Table(title="Ratings")
    for col in ("stage", "elo", "mu", "sigma", "games", "W", "D", "L"):
        ratings.add_column(col, justify="right")
    for size in (1, 2, 3):
        r = reg.rating(name, size)
        if r["games"]:
            ratings.add_row(f"{size}v{size}", f"{r['elo']:.0f}", f"{r['mu']:.2f}", f"{r['sigma']:.2f}",
                            str(r["games"]), str(r["wins"]), str(r["draws"]), str(r["losses"]))
    if ratings.row_count:
        out.print(ratings)
    else:
        out.print("No rated games yet.")


def _set_status(name: str, status: str, home: Path | None) -> None:
    _, reg = open_league(home)
    agent = reg.set_status(name, status)
    out.print(f"{agent.name} is now {agent.status}", highlight=False)


@app.command()
@handles_errors
def promote(name: Annotated[str, typer.Argument(help="Agent name.")], home: HomeOpt = None) -> None:
    """Make an agent the champion of its stage (the previous champion goes back to active).

    Example: league promote ppo-1v1-v12
    """
    _set_status(name, "champion", home)


@app.command()
@handles_errors
def retire(name: Annotated[str, typer.Argument(help="Agent name.")], home: HomeOpt = None) -> None:
    """Retire an agent: it keeps its history but is never sampled nor entered in tournaments.

    Example: league retire ppo-1v1-v3
    """
    _set_status(name, "retired", home)


@app.command()
@handles_errors
def reactivate(name: Annotated[str, typer.Argument(help="Agent name.")], home: HomeOpt = None) -> None:
    """Bring a retired agent back to active.

    Example: league reactivate ppo-1v1-v3
    """
    _set_status(name, "active", home)


# --------------------------------------------------------------------------- ratings


@app.command()
@handles_errors
def leaderboard(
    home: HomeOpt = None,
    stage: Annotated[str, typer.Option("--stage", help="Team size: 1v1, 2v2 or 3v3.")] = "1v1",
    by: Annotated[str, typer.Option("--by", help="Order by elo, trueskill (mu - 3 sigma) or mle.")] = "elo",
    all_: Annotated[bool, typer.Option("--all", help="Include retired agents.")] = False,
) -> None:
    """Rank a stage's agents by Elo, TrueSkill or the whole-history maximum-likelihood fit.

    Example: league leaderboard --stage 1v1 --by mle
    """
    from league.ratings import conservative

    if by not in ("elo", "trueskill", "mle"):
        raise LeagueError(f"Unknown ranking {by!r}; expected elo, trueskill or mle.")
    team_size = team_size_of(stage)
    _, reg = open_league(home, readonly=True)
    rows = reg.leaderboard(team_size, include_retired=all_)
    fit = reg.mle(team_size, names=[r["name"] for r in rows])
    for r in rows:
        r["ts"] = conservative(r["mu"], r["sigma"])
        r["mle"] = fit.rating(r["name"])
        r["ci"] = fit.interval(r["name"])
    key = {"elo": "elo", "trueskill": "ts", "mle": "mle"}[by]
    rows.sort(key=lambda r: r[key], reverse=True)
    table = Table(title=f"Leaderboard {stage} (by {by})")
    for col in ("#", "agent", "status", "elo", "mle", "95% CI", "mu", "sigma", "mu-3σ", "games", "W-D-L", "GD"):
        table.add_column(col, justify="left" if col in ("agent", "status") else "right")
    for rank, r in enumerate(rows, 1):
        lo, hi = r["ci"]
        table.add_row(
            str(rank), r["name"], r["status"], f"{r['elo']:.0f}", f"{r['mle']:.0f}",
            f"{lo:.0f}..{hi:.0f}" if r["games"] or r["name"] == fit.anchor else "-",
            f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ts']:.2f}", str(r["games"]),
            f"{r['wins']}-{r['draws']}-{r['losses']}", f"{r['goals_for'] - r['goals_against']:+d}",
        )
    out.print(table)


@app.command()
@handles_errors
def lineage(name: Annotated[str, typer.Argument(help="Agent name.")], home: HomeOpt = None) -> None:
    """Show the line of versions from the first one to NAME, and NAME's descendants.

    Example: league lineage ppo-1v1-v12
    """
    from league.lineage import line_to, lineage_of

    _, reg = open_league(home, readonly=True)
    reg.agent(name)  # unknown names fail with suggestions
    graph = lineage_of(reg)
    line = line_to(graph, name)

    def label(node: str) -> str:
        data = graph.nodes[node]
        mark = " ←" if node == name else ""
        return f"{node} [dim]({data['status']}, {data['steps_trained']:,} steps)[/]{mark}"

    tree = Tree(label(line[0]))
    branch = tree
    for node in line[1:]:
        branch = branch.add(label(node))

    def add_children(parent_branch: Tree, node: str) -> None:
        for child in sorted(graph.successors(node)):
            add_children(parent_branch.add(label(child)), child)

    add_children(branch, name)
    out.print(tree)


# Commands owned by the packages that implement them; each module is light at import time and
# keeps its heavy imports (torch, RocketSim, streamlit) inside its command functions.
from agents.cli_checkpoints import export_agent, import_agent  # noqa: E402
from arena.cli_bench import app as bench_app  # noqa: E402
from arena.tournament_cli import tournament_command  # noqa: E402
from dashboard.cli import dashboard_command  # noqa: E402
from training.cli import bench_train_command, train_command  # noqa: E402
from training.curriculum_cli import app as curriculum_app  # noqa: E402
from training.diagnose_cli import diagnose_command  # noqa: E402

app.command("train")(train_command)
app.command("tournament")(tournament_command)
app.command("dashboard")(dashboard_command)
app.command("import")(import_agent)
app.command("export")(export_agent)
app.command("diagnose")(diagnose_command)
bench_app.command("train")(bench_train_command)
app.add_typer(bench_app, name="bench")
app.add_typer(curriculum_app, name="curriculum")


def main() -> None:
    """Console-script entry point."""
    sys.exit(app())


if __name__ == "__main__":
    main()
