"""The dashboard's data access: the league database read through its stores (league.stores: typed rows,
their JSON columns read by the stores) and read models (league.standings, league.game_search,
league.climb), turned into DataFrames. No SQL here, and no Streamlit calls: each query takes the open
league's Registry, and those the pages call are marked `@cached_query` (dashboard/data.py), so a page calls
`summary(root)` (cached) and a test `summary.read(registry)`. Aggregation runs in SQLite in those read
models, so a page costs the same few queries whether the league has 200 games or 20,000. Column meanings:
docs/schema.md.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Sequence
from typing import Any

import networkx as nx
import pandas as pd

from dashboard.data import cached_query
from league.agent_facts import Manifest
from league.climb import climb
from league.errors import LeagueError
from league.game_search import RESULTS, GameFilter, find_games, players, records_against
from league.lineage import build_lineage
from league.names import split_version
from league.ratings import MleRatings, conservative
from league.registry import BASELINES, Agent, GateCheck, Registry
from league.sprt import Z95, elo_estimate
from league.standings import read_pair_records, read_standings, read_tournament_standings
from league.teams import is_team
from league.teams import members as team_members


# --------------------------------------------------------------------------- the league as a whole


@cached_query
def summary(reg: Registry) -> dict[str, int]:
    """Counts of agents, games and tournaments."""
    return {"agents": reg.agent_store.count(), "games": reg.game_store.count(),
            "tournaments": reg.tournament_store.count()}


@cached_query
def team_sizes(reg: Registry) -> list[int]:
    """Team sizes that have games or stage agents, smallest first (1 when there are none)."""
    return sorted(set(reg.game_store.counts_by_team_size()) | set(reg.agent_store.stage_sizes())) or [1]


@cached_query
def games_by_team_size(reg: Registry) -> dict[int, int]:
    return reg.game_store.counts_by_team_size()


# --------------------------------------------------------------------------- leaderboard


@cached_query
def leaderboard(reg: Registry, team_size: int, include_retired: bool = False,
                by: str = "elo") -> pd.DataFrame:
    """The team size's standings (league.standings: who is listed, what is counted, the order), best first.

    Columns: rank, name, kind, status, elo, mu, sigma, ts (mu - 3 sigma), games, wins, draws,
    losses, goals_for, goals_against, gd, last_played, mle, mle_low, mle_high (the MLE rating and
    its 95% interval; NaN for agents with no game to fit).
    """
    rows = read_standings(reg.db, team_size, reg.ratings_cfg, by=by, include_retired=include_retired).rows
    nan = (math.nan, math.nan)
    return pd.DataFrame({
        "rank": [r.rank for r in rows], "name": [r.name for r in rows], "kind": [r.kind for r in rows],
        "status": [r.status for r in rows], "elo": [r.elo for r in rows], "mu": [r.mu for r in rows],
        "sigma": [r.sigma for r in rows], "ts": [r.ts for r in rows], "games": [r.games for r in rows],
        "wins": [r.wins for r in rows], "draws": [r.draws for r in rows], "losses": [r.losses for r in rows],
        "goals_for": [r.goals_for for r in rows], "goals_against": [r.goals_against for r in rows],
        "gd": [r.gd for r in rows], "last_played": [r.last_played for r in rows],
        "mle": [r.mle if r.mle_interval else math.nan for r in rows],
        "mle_low": [(r.mle_interval or nan)[0] for r in rows], "mle_high": [(r.mle_interval or nan)[1] for r in rows],
    })


@cached_query
def mle(reg: Registry, team_size: int) -> MleRatings:
    """The whole-history MLE fit of the team size (every agent that may be listed, retired ones included)."""
    return read_standings(reg.db, team_size, reg.ratings_cfg, include_retired=True).fit


# --------------------------------------------------------------------------- head-to-head and MLE


PAIR_COLUMNS = ["agent", "opponent", "games", "wins", "draws", "losses", "score", "goals_for", "goals_against",
                "mixed", "score_rate"]


@cached_query
def pair_results(reg: Registry, team_size: int) -> pd.DataFrame:
    """Results of every ordered pair of agents that met, from the standings' read model
    (league.standings.read_pair_records): agent, opponent, games, wins, draws, losses, score (wins +
    draws / 2), goals_for, goals_against, mixed (how many of the games were mixed), score_rate.

    A mixed game ("A+necto" against "B+C") counts for every pair of members on opposite sides (A
    against B, A against C, necto against B, ...), as the standings count it for every member; mirror
    matches are left out."""
    rows: dict[tuple[str, str], list[int]] = {}
    for r in read_pair_records(reg.db, team_size):
        mixed = r.games if is_team(r.agent) or is_team(r.opponent) else 0
        for a in team_members(r.agent):
            for b in team_members(r.opponent):
                if a == b:
                    continue
                for key, values in (((a, b), (r.wins, r.draws, r.losses, r.goals_for, r.goals_against)),
                                    ((b, a), (r.losses, r.draws, r.wins, r.goals_against, r.goals_for))):
                    t = rows.setdefault(key, [0] * 6)
                    for i, v in enumerate((*values, mixed)):
                        t[i] += v
    frame = pd.DataFrame([(a, b, w + d + l, w, d, l, w + d / 2, gf, ga, m)
                          for (a, b), (w, d, l, gf, ga, m) in rows.items()], columns=PAIR_COLUMNS[:-1])
    frame["score_rate"] = frame["score"] / frame["games"]
    return frame


def score_matrix(pairs: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """The pair rows restricted to `names`, with every (agent, opponent) cell present (NaN if unplayed)."""
    grid = pd.MultiIndex.from_product([list(names), list(names)], names=["agent", "opponent"]).to_frame(index=False)
    grid = grid[grid["agent"] != grid["opponent"]]
    cells = grid.merge(pairs, on=["agent", "opponent"], how="left")
    cells["games"] = cells["games"].fillna(0).astype(int)
    return cells


# --------------------------------------------------------------------------- rating history


@cached_query
def rating_history(reg: Registry, names: Sequence[str], team_size: int) -> pd.DataFrame:
    """Each chosen agent's rating after every rated game: name, game_no, game_id, played, elo, mu,
    sigma, ts. game_no 0 is the rating before its first game."""
    columns = ["name", "game_no", "game_id", "played", "elo", "mu", "sigma"]
    if not names:
        return pd.DataFrame(columns=[*columns, "ts"])
    rows = []
    for name, changes in sorted(reg.game_store.rating_histories(names, team_size).items()):
        if changes:
            first = changes[0]
            rows.append((name, 0, None, first.played, first.elo_before, first.mu_before, first.sigma_before))
        rows += [(name, n, h.game_id, h.played, h.elo_after, h.mu_after, h.sigma_after)
                 for n, h in enumerate(changes, start=1)]
    frame = pd.DataFrame(rows, columns=columns)
    frame["played"] = pd.to_datetime(frame["played"], utc=True, format="ISO8601")
    frame["ts"] = conservative(frame["mu"], frame["sigma"])
    return frame


# --------------------------------------------------------------------------- agents and lineage


@cached_query
def agents(reg: Registry) -> pd.DataFrame:
    """Every agent with its parent's name and, per agent, its best-known rating (own stage)."""
    every = reg.agent_store.all(include_retired=True)
    names = {a.id: a.name for a in every}
    ratings = {(r.agent_id, r.team_size): r for r in reg.game_store.ratings()}
    rows = []
    for a in every:
        r = ratings.get((a.id, a.team_size or 1))
        rows.append((a.id, a.name, a.kind, a.team_size, a.status, names.get(a.parent_id), a.created, a.steps_trained,
                     a.checkpoint_path, a.notes, *((r.elo, r.mu, r.sigma, r.games) if r else (None, None, None, 0))))
    return pd.DataFrame(rows, columns=["id", "name", "kind", "team_size", "status", "parent", "created",
                                       "steps_trained", "checkpoint_path", "notes", "elo", "mu", "sigma", "games"])


@cached_query
def lineage_graph(reg: Registry) -> nx.DiGraph:
    """league.lineage's graph (parent -> child) of every agent, retired ones included (a node's `teacher`: whom
    it was distilled from)."""
    return build_lineage(reg.agent_store.all(include_retired=True))


def tree_layout(graph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """(generation, row) per node: roots at generation 0, leaves on consecutive rows and each
    parent centred on its children, so every line of versions reads left to right."""
    pos: dict[str, tuple[float, float]] = {}
    next_row = [0.0]

    def place(node: str, depth: int) -> float:
        children = sorted(graph.successors(node), key=lambda n: graph.nodes[n].get("id", 0))
        if not children:
            row = next_row[0]
            next_row[0] += 1.0
        else:
            rows = [place(child, depth + 1) for child in children]
            row = (rows[0] + rows[-1]) / 2.0
        pos[node] = (float(depth), row)
        return row

    roots = sorted((n for n in graph.nodes if graph.in_degree(n) == 0), key=lambda n: graph.nodes[n].get("id", 0))
    for root in roots:
        place(root, 0)
    return pos


@cached_query(ttl=0)
def agent_details(reg: Registry, name: str) -> dict[str, Any] | None:
    """One agent's row (league.stores.agents.Agent's fields) plus its parent's name, its children's names
    and its ratings per team size (league.stores.games.Rating's fields); None if there is no such agent."""
    agents = reg.agent_store
    agent = agents.find(name)
    if agent is None:
        return None
    row = dataclasses.asdict(agent)
    row["parent"] = agents.by_id(agent.parent_id).name if agent.parent_id is not None else None
    row["children"] = [child.name for child in agents.children(name)]
    row["ratings"] = [dataclasses.asdict(r) for r in reg.game_store.ratings([agent.id])]
    return row


# --------------------------------------------------------------------------- tournaments


@cached_query(ttl=0)
def tournaments(reg: Registry) -> pd.DataFrame:
    """Tournaments newest first with entrants count, progress (0..1) and opening_jitter (uu; 0: the standard
    kickoff spots). Not cached: the Tournaments page polls it while one is running (one small query)."""
    columns = ["id", "name", "team_size", "status", "seed", "games_per_pair", "planned_games", "finished_games",
               "opening_jitter", "created", "finished"]
    listed = list(reversed(reg.tournament_store.all()))
    frame = pd.DataFrame([[getattr(t, c) for c in columns] for t in listed], columns=columns)
    frame["entrants"] = pd.Series([len(t.entrants) for t in listed], dtype="int64")
    frame["progress"] = (frame["finished_games"] / frame["planned_games"].where(frame["planned_games"] > 0)).fillna(0.0)
    return frame


@cached_query(ttl=0)
def tournament_standings(reg: Registry, tournament_id: int) -> pd.DataFrame:
    """Points table of one tournament (league.standings): agent, games, wins, draws, losses, points
    (win 1, draw 0.5), gd (goal difference), score_rate; every entrant, best first."""
    rows = read_tournament_standings(reg.db, tournament_id, reg.ratings_cfg).rows
    return pd.DataFrame({
        "agent": [r.name for r in rows], "games": [r.games for r in rows], "wins": [r.wins for r in rows],
        "draws": [r.draws for r in rows], "losses": [r.losses for r in rows], "points": [r.points for r in rows],
        "gd": [r.gd for r in rows], "score_rate": [r.score_rate for r in rows],
    })


# --------------------------------------------------------------------------- games and replays

RESULT_FILTERS = RESULTS
GAME_COLUMNS = ["id", "tournament_id", "schedule_index", "origin", "team_size", "blue", "orange", "blue_goals",
                "orange_goals", "result", "length_seconds", "seed", "replay_path", "played"]
_game_row = operator.attrgetter(*GAME_COLUMNS)


@cached_query
def games(reg: Registry, tournament_id: int | None = None, outside_tournaments: bool = False,
          agent: str | None = None, result: str = "any", with_replay: bool = False,
          limit: int = 1000, versus: str | None = None, no_mirror: bool = False,
          team_size: int | None = None) -> pd.DataFrame:
    """Games newest first, as league.game_search.find_games lists them (GameFilter says what each filter
    keeps); a mixed game's sides are its whole teams ("A+necto"). Columns: GAME_COLUMNS."""
    found = find_games(reg.db, GameFilter(tournament_id, outside_tournaments, team_size, agent, versus, result,
                                          with_replay, no_mirror), limit)
    return pd.DataFrame.from_records([_game_row(g) for g in found], columns=GAME_COLUMNS)


@cached_query(ttl=0)
def latest_games(reg: Registry, tournament_id: int, limit: int) -> pd.DataFrame:
    """Not cached, like `tournaments` (the Tournaments page polls it): the newest games of a tournament."""
    return games.read(reg, tournament_id=tournament_id, limit=limit)


def games_listing(games: pd.DataFrame) -> pd.DataFrame:
    """Rows of `games` as the pages list them: game (a link to it on the Replays page), blue, score,
    orange (whole teams for a mixed game), origin, played (YYYY-MM-DD HH:MM)."""
    return pd.DataFrame({
        "game": [f"?page=replays&game={int(i)}" for i in games["id"]], "blue": games["blue"],
        "score": [f"{bg}-{og}" for bg, og in zip(games["blue_goals"], games["orange_goals"])],
        "orange": games["orange"], "origin": games["origin"],
        "played": [str(p)[:16].replace("T", " ") if p else "" for p in games["played"]]},
        columns=["game", "blue", "score", "orange", "origin", "played"])


@cached_query
def agents_in_games(reg: Registry, tournament_id: int | None = None,
                    outside_tournaments: bool = False) -> list[str]:
    """Names of the agents that played in the chosen set of games (every member of a mixed team)."""
    return players(reg.db, tournament_id, outside_tournaments)


@cached_query(ttl=0)
def game(reg: Registry, game_id: int) -> dict[str, Any] | None:
    """One game's row (league.stores.games.Game's fields: its sides' names, a mixed game's whole teams) and
    its tournament's name; None if there is no such game."""
    try:
        found = reg.game_store.game(int(game_id))
    except LeagueError:
        return None
    row = dataclasses.asdict(found)
    row["tournament"] = (reg.tournament_store.get(found.tournament_id).name if found.tournament_id is not None
                         else None)
    return row


# --------------------------------------------------------------------------- training runs against the baselines


@cached_query
def baseline_win_rates(reg: Registry, run: str, baselines: Sequence[str] = tuple(BASELINES)) -> pd.DataFrame:
    """league.climb.climb as a frame: how each version of run `run` (the agents named RUN-v1,
    RUN-v2, ...) did in its evaluation games against each baseline it played, one row per
    (version, baseline).

    Columns: version, k (the version number), steps (its steps_trained), baseline, games, wins,
    draws, losses, win_rate, draw_rate, score_rate (wins + draws / 2, as gates and ratings count
    them). Ordered by steps, then version, then baseline in the order of `baselines`. Tournament
    and manual games are left out: evaluation games are the ones training plays as it goes.
    """
    columns = ["version", "k", "steps", "baseline", "games", "wins", "draws", "losses", "win_rate", "draw_rate",
               "score_rate"]
    frame = pd.DataFrame([vars(p) for p in climb(reg.db, run, baselines)], columns=columns[:8])
    frame["win_rate"] = frame["wins"] / frame["games"]
    frame["draw_rate"] = frame["draws"] / frame["games"]
    frame["score_rate"] = (frame["wins"] + frame["draws"] / 2) / frame["games"]
    return frame[columns]


# --------------------------------------------------------------------------- community bots


COMMUNITY_KIND = "community"  # the registry's kind of every community bot (`league bot add`)


def _community_manifest(agent: Agent) -> Manifest | None:
    """The bot's manifest, None when its stored config cannot be read (the page still lists the bot)."""
    try:
        return agent.community
    except (TypeError, ValueError):
        return None


@cached_query
def community_bots(reg: Registry) -> pd.DataFrame:
    """Every community bot in the league (agents of kind "community"), oldest first, with the
    league's record against it.

    Columns: name, bot (its title), kind (necto, element, ...), stages (e.g. "1v1, 2v2, 3v3"),
    licence, status, games (against other members), and the members' wins, draws, losses and
    win_rate in those games (NaN without games).
    """
    columns = ["name", "bot", "kind", "stages", "licence", "status", "games", "wins", "draws", "losses", "win_rate"]
    bots = reg.agent_store.of_kind(COMMUNITY_KIND)
    totals: dict[str, list[int]] = {}  # bot -> [games, wins, draws, losses], all bots' records in one query
    for r in records_against(reg.db, [a.name for a in bots]):
        t = totals.setdefault(r.against, [0, 0, 0, 0])
        for i, v in enumerate((r.games, r.wins, r.draws, r.losses)):
            t[i] += v
    rows = []
    for agent in bots:
        manifest = _community_manifest(agent)
        try:
            stages = agent.stage
        except (TypeError, ValueError, AttributeError):
            stages = "?"
        games, wins, draws, losses = totals.get(agent.name, (0, 0, 0, 0))
        rows.append({"name": agent.name, "bot": manifest.title if manifest else agent.name,
                     "kind": manifest.kind if manifest else "", "stages": stages,
                     "licence": manifest.licence if manifest else "", "status": agent.status, "games": games,
                     "wins": wins, "draws": draws, "losses": losses})
    frame = pd.DataFrame(rows, columns=columns[:-1])
    frame["win_rate"] = frame["wins"] / frame["games"].where(frame["games"] > 0)
    return frame


def rate_interval(wins: int, games: int) -> tuple[float, float]:
    """The 95% interval of a win rate: league.sprt.elo_estimate's mean score +- 1.96 standard
    errors over the games counted as won or not (a draw is not a win), clipped to [0, 1]. Where
    every game ended alike its widest spread is taken, so 3 wins in 3 games is not a certainty."""
    if games <= 0:
        return math.nan, math.nan
    estimate = elo_estimate([games - wins, 0, wins])
    half = Z95 * estimate.score_se
    return max(0.0, estimate.score - half), min(1.0, estimate.score + half)


@cached_query
def community_results(reg: Registry, bot: str) -> pd.DataFrame:
    """Every member that played the agent `bot`, one row per (member, team size), from the
    member's view: best win rate first, then most games, then name.

    Columns: agent, kind, status, team_size, steps (its steps_trained), run and k (RUN and N when
    it is named RUN-vN, else None and NaN), games, wins, draws, losses, goals_for, goals_against,
    win_rate (wins / games; a draw is not a win), win_low and win_high (its 95% interval,
    `rate_interval`), score_rate (wins + draws / 2), first_game and last_game (ids).
    """
    columns = ["agent", "kind", "status", "team_size", "steps", "run", "k", "games", "wins", "draws", "losses",
               "goals_for", "goals_against", "win_rate", "win_low", "win_high", "score_rate", "first_game",
               "last_game"]
    records = [dataclasses.asdict(r) for r in records_against(reg.db, [bot])]
    if not records:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(records).drop(columns=["against"])
    versions = [split_version(name) for name in frame["agent"]]
    frame["run"] = [v[0] if v else None for v in versions]
    frame["k"] = pd.to_numeric(pd.Series([v[1] if v else math.nan for v in versions], index=frame.index))
    frame["win_rate"] = frame["wins"] / frame["games"]
    bounds = [rate_interval(int(w), int(n)) for w, n in zip(frame["wins"], frame["games"])]
    frame["win_low"] = [lo for lo, _ in bounds]
    frame["win_high"] = [hi for _, hi in bounds]
    frame["score_rate"] = (frame["wins"] + frame["draws"] / 2) / frame["games"]
    frame = frame.sort_values(["win_rate", "games", "agent", "team_size"], ascending=[False, False, True, True],
                              kind="stable")
    return frame[columns].reset_index(drop=True)


def community_climb(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of `community_results` that are versions of a training run (RUN-vN), for the chart of
    each run against the bot over its steps: ordered by run, then steps, then version number."""
    versions = results[results["run"].notna()].copy()
    versions["k"] = versions["k"].astype(int)
    return versions.sort_values(["run", "steps", "k"], kind="stable").reset_index(drop=True)


# --------------------------------------------------------------------------- curricula


@cached_query
def curricula(reg: Registry) -> pd.DataFrame:
    """Every curriculum, most recently updated first: name, status, stage_index (0-based, the stage
    in progress or last run), stages (how many), message, source, started, updated."""
    store = reg.curriculum_store
    stages = store.stage_counts()
    return pd.DataFrame([(c.name, c.status, c.stage_index, stages.get(c.name, 0), c.message, c.source, c.started,
                          c.updated) for c in store.all()],
                        columns=["name", "status", "stage_index", "stages", "message", "source", "started", "updated"])


@cached_query
def curriculum(reg: Registry, name: str) -> tuple[dict[str, Any] | None, pd.DataFrame, pd.DataFrame]:
    """One curriculum's spec (None if it is gone), stages and gate checks, read together."""
    return curriculum_spec(reg, name), curriculum_stages(reg, name), gate_checks(reg, name)


def curriculum_spec(reg: Registry, name: str) -> dict[str, Any] | None:
    """The curriculum as it was last run (its spec_json), {} if unreadable, None if there is no such curriculum."""
    try:
        found = reg.curriculum_store.get(name)
    except LeagueError:
        return None
    try:
        spec = found.spec
    except (TypeError, ValueError):
        return {}
    return spec if isinstance(spec, dict) else {}


def curriculum_stages(reg: Registry, name: str) -> pd.DataFrame:
    """A curriculum's stages in order, with their start and final agents and the final agent's
    rating at the stage's team size.

    Columns: stage_index, name, team_size, run, status, steps (trained in the stage), start_steps,
    start_agent, final_agent, started, finished, final_elo, final_mu, final_sigma, final_games
    (NaN / 0 when the stage has no final agent or it has no rated game), checks, checks_passed.
    """
    columns = ["stage_index", "name", "team_size", "run", "status", "steps", "start_steps", "start_agent",
               "final_agent", "started", "finished", "final_elo", "final_mu", "final_sigma", "final_games", "checks",
               "checks_passed"]
    try:
        stages = reg.curriculum_store.get(name).stages
    except LeagueError:
        return pd.DataFrame(columns=columns)
    checks = reg.curriculum_store.gate_checks(name)
    finals = [s.final_agent_id for s in stages if s.final_agent_id is not None]
    ratings = {(r.agent_id, r.team_size): r for r in reg.game_store.ratings(finals)}
    rows = []
    for s in stages:
        rating = ratings.get((s.final_agent_id, s.team_size))
        done = [c.passed for c in checks if c.stage_index == s.stage_index]
        rows.append((s.stage_index, s.name, s.team_size, s.run, s.status, s.steps, s.start_steps, s.start_agent,
                     s.final_agent, s.started, s.finished,
                     *((rating.elo, rating.mu, rating.sigma, rating.games) if rating else (None, None, None, 0)),
                     len(done), sum(done)))
    return pd.DataFrame(rows, columns=columns)


def _criteria(check: GateCheck) -> list[dict[str, Any]]:
    """A gate check's criteria as a list of {name, passed, value, threshold, reason} ([] if unreadable)."""
    try:
        criteria = check.criteria
    except (TypeError, ValueError):
        return []
    if not isinstance(criteria, list):
        return []
    return [c for c in criteria if isinstance(c, dict)]


def gate_checks(reg: Registry, name: str) -> pd.DataFrame:
    """A curriculum's gate checks in the order they were made.

    Columns: id, stage_index, checked, agent, steps (the stage's steps at the check), passed
    (bool), criteria (the stored list of {name, passed, value, threshold, reason}), evidence (one
    line: every criterion's reason, failed ones first, as the curriculum's report says it).
    """
    checks = reg.curriculum_store.gate_checks(name)
    frame = pd.DataFrame([(c.id, c.stage_index, c.checked, c.agent, c.steps, c.passed) for c in checks],
                         columns=["id", "stage_index", "checked", "agent", "steps", "passed"])
    frame["passed"] = frame["passed"].astype(bool)
    frame["criteria"] = [_criteria(c) for c in checks]
    frame["evidence"] = [gate_evidence(c) for c in frame["criteria"]]
    return frame


def gate_evidence(criteria: Sequence[dict[str, Any]]) -> str:
    """One line for a gate check: each criterion's reason, failed ones first (the curriculum report's wording)."""
    if not criteria:
        return "no criteria: the step budget alone decides"
    ordered = sorted(criteria, key=lambda c: bool(c.get("passed")))
    return "; ".join(("ok: " if c.get("passed") else "FAILED: ") + str(c.get("reason", c.get("name", "?")))
                     for c in ordered)
