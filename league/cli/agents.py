"""`league init`, `agents`, `show`, `promote`, `retire`, `reactivate`, `prune`, `leaderboard`,
`lineage`: the league and its agents. Light: none of these imports torch, RocketSim or streamlit
(but `promote --sprt`, which plays a match, once it is asked for)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from league.cli.common import ROW_ID, ConfigOpt, HomeOpt, StageOpt, handles_errors, open_league, out
from league.config import openings_text
from league.errors import LeagueError

NameArg = Annotated[str, typer.Argument(help="Agent name.")]
RANKINGS = ("elo", "trueskill", "mle", "nash")  # what --by offers (league.standings also ranks by points)
NASH_SUPPORT_NAMED = 12  # the most agents of the Nash support the caption of --by nash names


@handles_errors
def init(home: HomeOpt = None, config: ConfigOpt = None) -> None:
    """Create a league home with its database and the baseline agents `random` and `rule`.

    With --config, the file is validated and kept as the league's own config layer
    (<home>/config.yaml), used by every later command on this league.

    Example: league init --home ./my-league --config my-ratings.yaml
    """
    from league.create import create_league
    from league.home import resolve_home

    league_home = resolve_home(home)
    existed = create_league(league_home, config)
    verb = "Already initialised" if existed else "Created"
    out.print(f"{verb} league at {league_home.root}", highlight=False)


@handles_errors
def list_agents(
    home: HomeOpt = None,
    stage: StageOpt = None,
    all_: Annotated[bool, typer.Option("--all", help="Include retired agents.")] = False,
) -> None:
    """List the league's agents (retired ones only with --all).

    Example: league agents --stage 1v1 --all
    """
    from league.config import team_size_of

    team_size = team_size_of(stage) if stage is not None else None
    _, reg = open_league(home, readonly=True)
    agents = reg.agent_store.all(team_size, include_retired=all_)
    by_id = {a.id: a.name for a in reg.agent_store.all(include_retired=True)}
    table = Table(title=f"Agents{f' ({stage})' if stage else ''}")
    for col in ("name", "kind", "stage", "status", "parent", "steps", "created"):
        table.add_column(col, justify="right" if col == "steps" else "left")
    for a in agents:
        table.add_row(a.name, a.kind, a.stage, a.status, by_id.get(a.parent_id, "") if a.parent_id else "",
                      f"{a.steps_trained:,}", a.created[:19].replace("T", " "))
    out.print(table)


@handles_errors
def show(name: NameArg, home: HomeOpt = None) -> None:
    """Show one agent: metadata, ratings per stage, parent and children.

    Example: league show rule
    """
    from league.profile import agent_profile
    from league.provenance import provenance_facts

    _, reg = open_league(home, readonly=True)
    profile = agent_profile(reg, name)
    agent = profile.agent
    info = Table.grid(padding=(0, 2))
    info.add_column(style="bold")
    info.add_column()
    for key, value in (
        ("name", agent.name), ("kind", agent.kind), ("stage", agent.stage), ("status", agent.status),
        ("parent", profile.parent or "-"), ("children", ", ".join(profile.children) or "-"),
        ("created", agent.created), ("steps trained", f"{agent.steps_trained:,}"),
        ("checkpoint", agent.checkpoint_path or "-"), ("sha256", agent.checkpoint_sha256 or "-"),
        ("notes", agent.notes or "-"),
        *provenance_facts(reg, agent),
    ):
        info.add_row(key, escape(value))
    out.print(info)
    ratings = Table(title="Ratings")
    for col in ("stage", "elo", "mu", "sigma", "games", "W", "D", "L"):
        ratings.add_column(col, justify="right")
    for stage, r in profile.ratings.items():
        ratings.add_row(stage, f"{r.elo:.0f}", f"{r.mu:.2f}", f"{r.sigma:.2f}",
                        str(r.games), str(r.wins), str(r.draws), str(r.losses))
    if ratings.row_count:
        out.print(ratings)
    else:
        out.print("No rated games yet.")
    if profile.exports:
        exports = Table(title="Exports")
        for col in ("created", "format", "folder", "zip", "actions"):
            exports.add_column(col)
        for e in profile.exports:
            exports.add_row(e.created[:19].replace("T", " "), e.format, e.path, e.zip_path or "-",
                            "argmax" if e.deterministic else "sampled")
        out.print(exports)
    if profile.probes:
        probes = Table(title="Exploitability probes (league probe: the probe's win rate is a lower bound)")
        for col in ("stage", "probe", "from", "minutes", "steps", "W-D-L", "win rate", "95% interval"):
            probes.add_column(col)
        for p in profile.probes:
            low, high = p.interval
            probes.add_row(f"{p.team_size}v{p.team_size}", escape(p.probe), escape(p.start or "fresh"),
                           f"{p.minutes:g}", f"{p.steps:,}", f"{p.wins}-{p.draws}-{p.losses}", f"{p.win_rate:.0%}",
                           f"{low:.0%}..{high:.0%}")
        out.print(probes)
    for test in profile.panel_tests[-1:]:  # the latest: what it was last measured against
        openings = "" if test.opening_jitter is None else f", {openings_text(test.opening_jitter)}"
        panel = Table(title=f"Evaluation panel at {test.steps:,} steps ({test.created[:19].replace('T', ' ')}, run "
                            f"{test.run}{openings}): {test.verdict}")
        for col in ("member", "W-D-L", "score", "95% interval"):
            panel.add_column(col)
        for member, r in test.records.items():
            low, high = r.score_interval
            panel.add_row(escape(member), str(r), f"{r.score:.0%}", f"{low:.0%}..{high:.0%}")
        out.print(panel)
    if profile.crowned is not None and profile.title_records:
        c = profile.crowned
        was = f", from {c.previous_champion}" if c.previous_champion else ""
        out.print(_title_table(f"Title {profile.title_name}: crowned{was}", profile.title_records))
    champion = reg.agent_store.champion(agent.team_size) if agent.team_size else None
    if champion is not None and champion.name == agent.name:  # finding a round robin that kept it reads them all
        from arena.crown import title_kept

        c = profile.crowned
        kept = title_kept(reg, agent.name, agent.team_size, c.tournament_id if c else None)
        if kept is not None:
            out.print(_title_table(f"Title {kept.name}: kept", kept.records))


def _title_table(said: str, records) -> Table:
    """An agent's record against each entrant of a title round robin, its worst matchup first."""
    title = Table(title=f"{said} (its worst matchup the best)")
    for col in ("entrant", "W-D-L", "score", "95% interval"):
        title.add_column(col)
    for entrant, r in sorted(records.items(), key=lambda item: item[1].score):
        low, high = r.score_interval
        title.add_row(escape(entrant), str(r), f"{r.score:.0%}", f"{low:.0%}..{high:.0%}")
    return title


def _set_status(name: str, status: str, home: Path | None) -> None:
    _, reg = open_league(home)
    agent = reg.agent_store.set_status(name, status)
    out.print(f"{agent.name} is now {agent.status}", highlight=False)


NOT_PROMOTED = 1  # `league promote --sprt`: the test ran and the champion stays (2 stays the usage error)


@handles_errors
def promote(
    name: NameArg,
    sprt: Annotated[bool, typer.Option("--sprt", help="Promote only if an SPRT match against the stage's champion "
                                       "(rule when it has none) accepts H1; exit 1 when it does not.")] = False,
    sprt_params: Annotated[Optional[str], typer.Option("--sprt-params", help="elo0=0,elo1=30,alpha=0.05,beta=0.05"
                                                       "[,model=...] (default: promotion.sprt).",
                                                       show_default=False)] = None,
    max_games: Annotated[Optional[int], typer.Option("--max-games", help="The SPRT's cap, an even number (default: "
                                                     "promotion.max_games).", show_default=False)] = None,
    game_seconds: Annotated[Optional[float], typer.Option("--game-seconds", help="Game clock per game (default: "
                                                          "promotion.game_seconds).", show_default=False)] = None,
    batch_pairs: Annotated[Optional[int], typer.Option("--batch-pairs", help="Pairs per batch, the SPRT checked "
                                                       "after each (default: 4 per worker).", show_default=False)] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Match seed (default from config).",
                                                show_default=False)] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", help="Worker processes (default: one per core).",
                                                   show_default=False)] = None,
    config: ConfigOpt = None,
    home: HomeOpt = None,
) -> None:
    """Make an agent the champion of its stage (the previous champion goes back to active).

    With --sprt the agent must earn it: it plays an SPRT match against the stage's champion (the
    rule bot while the stage has none), recorded and rated like `league match`, and is promoted
    only when H1 (at least elo1 better) is accepted. H0 or no decision within the cap: the
    champion stays and the command exits 1. Exit 0 means the agent is the champion when the
    command ends. Every promotion, and every test that failed, is recorded (docs/match.md,
    "Gated promotion"). Interrupted? Run the same command again to resume the match.

    Example: league promote ppo-1v1-v12

    Example: league promote ppo-1v1-v13 --sprt --sprt-params elo0=0,elo1=20 --max-games 200
    """
    if not sprt:
        given = [flag for flag, value in (("--sprt-params", sprt_params), ("--max-games", max_games),
                                          ("--game-seconds", game_seconds), ("--batch-pairs", batch_pairs),
                                          ("--seed", seed), ("--workers", workers), ("--config", config))
                 if value is not None]
        if given:
            raise LeagueError(f"{given[0]} goes with --sprt (a plain promote plays no match).")
        _, reg = open_league(home)
        promotion = reg.promotion_store.promote_manually(name)
        agent = reg.agent_store.get(name)
        out.print(f"{agent.name} is {'now' if promotion else 'already'} champion", highlight=False)
        return
    if not _promote_by_sprt(name, sprt_params, max_games, game_seconds, batch_pairs, seed, workers, config, home):
        raise typer.Exit(NOT_PROMOTED)


def _promote_by_sprt(name: str, sprt_params: str | None, max_games: int | None, game_seconds: float | None,
                     batch_pairs: int | None, seed: int | None, workers: int | None, config: Path | None,
                     home: Path | None) -> bool:
    """`league promote NAME --sprt`: the test, its match's statistics and the decision; whether NAME is champion."""
    import time

    from arena.promotion import REFERENCE_WITHOUT_CHAMPION, candidate, promote_by_sprt
    from arena.engine.cores import workers_or_default
    from league.cli.match import match_settings_text, play_with_progress, print_match_result
    from league.config import load_config
    from league.home import resolve_home
    from league.registry import Registry
    from league.sprt import SprtParams
    from league.sprt_verdict import sprt_verdict

    params = SprtParams.parse(sprt_params) if sprt_params is not None else None
    league_home = resolve_home(home).require()
    first = Registry.open(league_home.db_path, readonly=True)  # the agent's stage chooses the config
    try:
        stage = candidate(first, name).stage
    finally:
        first.close()
    cfg = load_config(stage=stage, user_file=config, home_file=league_home.config_path,
                      overrides={"seed": seed, "promotion.game_seconds": game_seconds})
    registry = Registry.open(league_home.db_path, cfg.ratings)
    started, played = time.perf_counter(), 0

    def play(run) -> None:
        nonlocal played
        m = run.match
        against = (f"the {stage} champion {m.b}" if m.b != REFERENCE_WITHOUT_CHAMPION else
                   f"{m.b} (the {stage} stage has no champion yet: a first champion must beat the {m.b} bot)")
        if run.already_finished:
            out.print(f"Match {m.id} ({m.a} vs {m.b}, {match_settings_text(m)}) already decided this test "
                      f"{m.finished[:19].replace('T', ' ')} UTC; give another --seed to test again.",
                      highlight=False, soft_wrap=True)
            return
        verb = "Resuming" if run.resumed else "Testing"
        out.print(f"{verb} {name} against {against} in match {m.id}: {match_settings_text(m)}, batches of "
                  f"{m.batch_pairs} pairs, {m.game_seconds:g} s games", highlight=False, soft_wrap=True)
        played = play_with_progress(run, f"Run the same command to finish the test (match {m.id}).")

    result = promote_by_sprt(league_home, registry, cfg, name, params, max_games, batch_pairs=batch_pairs,
                             workers=workers_or_default(workers), play=play)
    if result.already_champion:
        out.print(f"{name} is already the {stage} champion; nothing to test.", highlight=False)
        return True
    m = result.match
    print_match_result(m, None if result.already_recorded else time.perf_counter() - started, played)
    if result.is_champion:
        was = f" (was {result.champion_before})" if result.champion_before else ""
        out.print(f"promoted: {name} is now the {stage} champion{was}.", highlight=False)
        return True
    why = sprt_verdict(m.decision, m.max_games)  # the match's verdict, in full, is printed just above
    if m.decision == "H1":
        why += f" in match {m.id}, but {name} is no longer the champion"
    stays = (f"{result.champion_before} stays the {stage} champion" if result.champion_before
             else f"the {stage} stage still has no champion")
    out.print(f"not promoted: {why}; {stays}.", highlight=False, soft_wrap=True)
    return False


@handles_errors
def retire(name: NameArg, home: HomeOpt = None) -> None:
    """Retire an agent: it keeps its history but is never sampled nor entered in tournaments.

    Example: league retire ppo-1v1-v3
    """
    _set_status(name, "retired", home)


@handles_errors
def reactivate(name: NameArg, home: HomeOpt = None) -> None:
    """Bring a retired agent back to active.

    Example: league reactivate ppo-1v1-v3
    """
    _set_status(name, "active", home)


@handles_errors
def prune(
    stage: Annotated[str, typer.Option("--stage", help="Team size: 1v1, 2v2 or 3v3.", show_default=False)],
    keep: Annotated[int, typer.Option("--keep", help="Always keep this many best agents by MLE.")] = 5,
    margin: Annotated[float, typer.Option("--margin", help="Retire agents more than this many Elo below the "
                                          "champion...")] = 100.0,
    confidence: Annotated[float, typer.Option("--confidence", help="...when the likelihood that the champion is "
                                              "stronger is at least this.")] = 0.95,
    min_games: Annotated[int, typer.Option("--min-games", help="Judge only agents with this many rated games.")] = 10,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would be retired; change nothing.")] = False,
    home: HomeOpt = None,
) -> None:
    """Retire a stage's agents that add nothing: those clearly weaker than the champion, and
    near-duplicates of a newer version of their run (overlapping 95% intervals, rated no higher).

    The champion, the baselines, the --keep best by MLE, lineage anchors (curriculum start and
    final agents, parents of another run) and agents with too few games are always kept. Prints
    each agent retired (or kept as a candidate) and why; retired agents keep their games and
    ratings, and `league reactivate NAME` brings one back. See docs/prune.md.

    Example: league prune --stage 1v1 --keep 5 --dry-run
    """
    from league.config import team_size_of
    from league.prune import prune_stage

    team_size = team_size_of(stage)
    _, reg = open_league(home, readonly=dry_run)
    plan = prune_stage(reg, team_size, keep=keep, margin=margin, confidence=confidence, min_games=min_games,
                       dry_run=dry_run)
    ref = plan.reference
    rules = f"margin {margin:g} Elo, LOS >= {confidence:g}, keep {keep}, judging agents with {min_games}+ games"
    if ref is None:
        out.print(f"Prune {stage}: no champion and no agent with {min_games} rated games, so none is compared "
                  f"with a champion ({rules}).", highlight=False)
    else:
        low, high = ref.interval
        out.print(f"Prune {stage}: against the {ref.reason} {ref.name}, MLE {ref.rating:.0f} ({low:.0f}..{high:.0f}); "
                  f"{rules}.", highlight=False)
    if plan.retire or plan.keep:
        verb = "would retire" if dry_run else "retired"
        table = Table(title=f"Prune {stage}{' (dry run)' if dry_run else ''}")
        for col in ("agent", "decision", "mle", "95% CI", "games", "why"):
            table.add_column(col, justify="right" if col in ("mle", "95% CI", "games") else "left")
        for decision, verdicts in ((verb, plan.retire), ("keep", plan.keep)):
            for v in verdicts:
                table.add_row(v.name, decision, f"{v.rating:.0f}", f"{v.interval[0]:.0f}..{v.interval[1]:.0f}",
                              str(v.games), escape(v.reason))
        out.print(table)
    n = len(plan.retire)
    agents_ = f"{n} agent{'s' if n != 1 else ''}"
    if not n:
        out.print(f"Nothing to retire in {stage}.", highlight=False)
    elif dry_run:
        out.print(f"Would retire {agents_}; run again without --dry-run to retire them.", highlight=False)
    else:
        out.print(f"Retired {agents_}; they keep their games and ratings (`league reactivate NAME` brings one back).",
                  highlight=False)


@handles_errors
def leaderboard(
    home: HomeOpt = None,
    stage: Annotated[Optional[str], typer.Option(
        "--stage", help="Team size: 1v1, 2v2 or 3v3 (default 1v1; with --tournament, the tournament's).",
        show_default=False)] = None,
    by: Annotated[str, typer.Option(
        "--by", help="Order by elo, trueskill (mu - 3 sigma), mle or nash (the Nash-averaged score).")] = "elo",
    tournament: Annotated[Optional[int], typer.Option(
        "--tournament", metavar="ID", show_default=False, **ROW_ID,
        help="With --by nash: weigh one tournament's entrants over its games alone.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Include retired agents.")] = False,
    anchor: Annotated[Optional[str], typer.Option(
        "--anchor", metavar="NAME[=ELO]", show_default=False,
        help="Pin the MLE fit on any agent with games in the stage, at ELO (default: ratings.mle.anchor_rating, "
             "1500); without it, the configured anchor (rule = 1500).")] = None,
) -> None:
    """Rank a stage's agents by Elo, TrueSkill, the whole-history maximum-likelihood fit or Nash averaging.

    --by nash lists the agents with games among the listed ones by their Nash-averaged score (the
    expected score against the maximum-entropy Nash mixture, minus 1/2; 0 for the agents the mixture
    plays) with their Nash weight: a ranking that many near-copies of one strategy do not inflate
    (docs/league-roles.md). Pairs that never met count as even; the caption says how full the payoff
    matrix is and, when most pairs never met, names the tournaments whose games form a full round
    robin: `--tournament ID` computes over one tournament's games alone.

    Lists the stage's agents and the baselines, and any other agent with games in that team
    size; an agent with no game to fit has no MLE interval and ranks last by mle. --anchor
    moves every MLE rating by one constant and makes the intervals relative to that agent.
    Where mixed teams played (`league match "A+necto" "B+C" --stage 2v2`), a "mixed" column
    counts each agent's games in which a side was a team of several members.

    Example: league leaderboard --stage 1v1 --by mle --anchor necto=2000
             league leaderboard --by nash --tournament 3
    """
    from league.config import stage_of, team_size_of
    from league.standings import parse_anchor, read_standings

    if by not in RANKINGS:
        raise LeagueError(f"Unknown ranking {by!r}; expected elo, trueskill, mle or nash.")
    if tournament is not None and by != "nash":
        raise LeagueError("--tournament goes with --by nash (a tournament's table by points is printed when it "
                          "finishes, and on the dashboard's Tournaments page).")
    team_size = team_size_of(stage) if stage is not None else None
    _, reg = open_league(home, readonly=True)
    mle_cfg = reg.ratings_cfg.mle
    pinned = parse_anchor(anchor, mle_cfg.anchor_rating) if anchor is not None else None
    if by == "nash":
        _print_nash_leaderboard(reg, team_size, all_, pinned, tournament)
        return
    team_size = team_size or 1
    stage = stage_of(team_size)
    board = read_standings(reg.db, team_size, reg.ratings_cfg, by=by, include_retired=all_, anchor=pinned)
    fit = board.fit
    caption = (f"MLE anchored: {fit.anchor} = {fit.rating(fit.anchor):g}" if fit.anchor is not None else
               f"MLE anchored: a virtual player = {mle_cfg.anchor_rating:g} ({mle_cfg.anchor_agent} has no games)")
    mixed = sum(r.mixed for r in board.rows)
    if mixed:
        caption += "\nmixed: the agent's games in which a side was a team of several members"
    table = Table(title=f"Leaderboard {stage} (by {by})", caption=escape(caption))
    columns = ("#", "agent", "status", "elo", "mle", "95% CI", "mu", "sigma", "mu-3σ", "games", "W-D-L", "GD")
    for col in columns + (("mixed",) if mixed else ()):
        table.add_column(col, justify="left" if col in ("agent", "status") else "right")
    for r in board.rows:
        table.add_row(
            str(r.rank), r.name, r.status, f"{r.elo:.0f}", f"{r.mle:.0f}",
            f"{r.mle_interval[0]:.0f}..{r.mle_interval[1]:.0f}" if r.mle_interval else "-",
            f"{r.mu:.2f}", f"{r.sigma:.2f}", f"{r.ts:.2f}", str(r.games), f"{r.wins}-{r.draws}-{r.losses}",
            f"{r.gd:+d}", *((str(r.mixed),) if mixed else ()),
        )
    out.print(table)


def _print_nash_leaderboard(reg, team_size: int | None, include_retired: bool, anchor: tuple[str, float] | None,
                            tournament: int | None) -> None:
    """`league leaderboard --by nash`: each member's Nash weight and Nash-averaged score (league.nash_standings)."""
    from league.nash_standings import SPARSE_BELOW, read_nash, round_robins

    board = read_nash(reg.db, team_size if team_size or tournament is not None else 1, reg.ratings_cfg,
                      include_retired=include_retired, tournament_id=tournament, anchor=anchor)
    nash = board.nash
    if not nash.members:
        out.print(f"No games between the listed agents in {board.where} yet: nothing to average.", highlight=False)
        return
    support = board.support
    more = f" and {len(support) - NASH_SUPPORT_NAMED} more" if len(support) > NASH_SUPPORT_NAMED else ""
    notes = [f"Nash support: {', '.join(support[:NASH_SUPPORT_NAMED])}{more}",
             "nash score: expected score against the Nash mixture, minus 1/2 (0 on the support)",
             f"payoff matrix {board.fill:.0%} full: {board.met_pairs} of {board.pairs} pairs met"]
    unplayed = board.pairs - board.met_pairs
    if unplayed:
        notes.append(f"{unplayed} pair{'s' if unplayed != 1 else ''} of agents never met and count as even")
    if nash.left_out:
        notes.append(f"Left out (no game against a listed agent): {', '.join(nash.left_out)}")
    table = Table(title=f"Leaderboard {board.where} (by nash)", caption=escape("\n".join(notes)))
    for col in ("#", "agent", "status", "nash weight", "nash score", "elo", "mle", "games", "W-D-L"):
        table.add_column(col, justify="left" if col in ("agent", "status") else "right")
    for row in board.rows():
        r, weight = row.standing, row.weight
        table.add_row(str(row.rank), row.name, r.status if r else "team",
                      "<0.001" if 0 < weight < 0.0005 else f"{weight:.3f}", f"{round(row.score, 3) or 0.0:+.3f}",
                      f"{r.elo:.0f}" if r else "-", f"{r.mle:.0f}" if r else "-", str(row.games),
                      f"{row.wins}-{row.draws}-{row.losses}")
    out.print(table)
    if board.too_sparse:
        full = round_robins(reg.db, board.team_size)
        offer = ("; over one tournament's games instead: " + ", ".join(
            f"`--tournament {t.id}` ({t.name}, {t.entrants} entrants, {t.games} games)" for t in full[:5])
                 if full else "; play a round robin first (`league tournament --games 10`) and weigh it with "
                              "`--tournament ID`")
        out.print(f"Too sparse to mean much: fewer than {SPARSE_BELOW:.0%} of the pairs met, so most of the "
                  f"matrix is pairs that never met counted as even{offer}.", highlight=False)


@handles_errors
def lineage(name: NameArg, home: HomeOpt = None) -> None:
    """Show the line of versions from the first one to NAME, and NAME's descendants.

    Example: league lineage ppo-1v1-v12
    """
    from league.lineage import line_to, lineage_of

    _, reg = open_league(home, readonly=True)
    reg.agent_store.get(name)  # unknown names fail with suggestions
    graph = lineage_of(reg)
    line = line_to(graph, name)

    def label(node: str) -> str:
        data = graph.nodes[node]
        mark = " ←" if node == name else ""
        teacher = f", distilled from {escape(data['teacher'])}" if data.get("teacher") else ""
        return f"{escape(node)} [dim]({data['status']}, {data['steps_trained']:,} steps{teacher})[/]{mark}"

    tree = Tree(label(line[0]))
    branch = tree
    for node in line[1:]:
        branch = branch.add(label(node))

    def add_children(parent_branch: Tree, node: str) -> None:
        for child in sorted(graph.successors(node)):
            add_children(parent_branch.add(label(child)), child)

    add_children(branch, name)
    out.print(tree)
