"""Head-to-head matches: agent A against agent B in mirrored pairs, in batches, until an SPRT decides.

    outcome = run_sprt_match(home, registry, cfg, "ppo-1v1-v13", "ppo-1v1-v12", SprtParams(elo1=30))
    outcome.decision  # "H1": A is at least elo1 better; "H0": no better than elo0; "inconclusive"

or step by step (what `league match` does, to show each batch):

    run = start_or_resume_match(registry, home, cfg, a, b, params=..., max_games=400, workers=2)
    for progress in run.batches: ...
    match_outcome(registry, run.id)

A match is a tournament of the two entrants underneath (league/stores/matches.py): its schedule
is the round robin's (pair p = games 2p and 2p + 1, the same seed with A on blue, then B), its
games are recorded exactly as a tournament's (replay written atomically, then the game and its
rating updates in one transaction), and it is owned, while played, through the tournament's lock.

Batches are fixed by pair index: batch k holds pairs [k K, (k + 1) K). After a batch the
statistics are computed from the pentanomial counts of every complete pair so far, saved, and
the SPRT asked for a decision. A resumed match walks the same batch boundaries, skipping the
batches already recorded (checking each again) and playing only the missing games of the first
incomplete one; since every game replays exactly from its seed, an interrupted match stops where
an uninterrupted one would, with the same counts.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass

from arena.engine.game import GameSpec
from arena.tournament import MAX_ARENAS_PER_WORKER, check_member, record_outcome, resolve_side
from arena.game_pool import GamePool
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.locks import Ownership, claim
from league.registry import Game, MatchSettings, MatchStats, Registry
from league.schedule import MAX_GAMES_PER_PAIR, round_robin
from league.sprt import SprtParams, decide, elo_estimate, pair_score, sprt_result
from league.teams import check_apart, is_team, member_names

DEFAULT_MAX_GAMES = 400
PAIRS_PER_WORKER = 4  # the default batch: 4 pairs (8 games) per worker process
MAX_BATCH_PAIRS = MAX_GAMES_PER_PAIR // 2


@dataclass(frozen=True)
class MatchProgress:
    """Where a match stands after batch `batch` of `batches` (`played`: games played in it now;
    0 for a batch recorded before a resume, checked again)."""

    batch: int
    batches: int
    played: int
    stats: MatchStats
    decision: str | None  # "H1", "H0", or None (play on; always None for a fixed match)
    elapsed_seconds: float


@dataclass(frozen=True)
class MatchOutcome:
    """A match as recorded: what it tested and where it ended (or stands)."""

    id: int
    tournament_id: int
    a: str
    b: str
    team_size: int
    mode: str  # "sprt" or "fixed"
    params: SprtParams | None
    max_games: int
    batch_pairs: int
    game_seconds: float
    seed: int
    status: str  # running, interrupted, finished, abandoned
    decision: str | None  # H1, H0, inconclusive; None for a fixed match or one not finished
    stats: MatchStats
    created: str
    finished: str | None
    deterministic: bool = True  # network agents play their most likely action; False: they sample
    opening_jitter: float = 0.0  # uu each car's kickoff spot may move as a game opens (game.opening_jitter)

    @property
    def bounds(self) -> tuple[float, float] | None:
        return self.params.bounds if self.params else None


@dataclass(frozen=True)
class MatchRun:
    """A match ready to play (claimed), or one already finished (`batches` then empty)."""

    id: int
    resumed: bool
    already_finished: bool
    recorded: int  # games recorded before this run
    match: MatchOutcome
    batches: Iterator[MatchProgress]


def params_json(params: SprtParams | None) -> str | None:
    return None if params is None else json.dumps(asdict(params), sort_keys=True)


def check_max_games(max_games: int) -> None:
    if not 2 <= max_games <= MAX_GAMES_PER_PAIR or max_games % 2:
        raise LeagueError(f"--max-games must be an even number of games (whole mirrored pairs) from 2 to "
                          f"{MAX_GAMES_PER_PAIR:,}, not {max_games:,}.")


def check_agents(registry: Registry, a: str, b: str, team_size: int, b_any_stage: bool = False) -> tuple[str, str]:
    """Both sides as played: each one agent, or in 2v2 and 3v3 a mixed team of `team_size` members
    joined by "+" (league.teams); every member exists, plays this team size and is not retired, and
    the sides differ and share no member. `b_any_stage`: B, one agent, may be another team size's
    (a curriculum gate's previous-stage agent; the observation layout is the same for every team
    size, and its games are rated in this one)."""
    if is_team(a) or is_team(b):
        a, b = (resolve_side(registry, side, team_size, "play a match") for side in (a, b))
        check_apart(a, b)
        return a, b
    if a == b:
        raise LeagueError(f"A match needs two different agents, not {a!r} twice.")
    for name in (a, b):
        check_member(registry, name, team_size, "play a match", any_size=b_any_stage and name == b)
    return a, b


def match_outcome(registry: Registry, match_id: int) -> MatchOutcome:
    m = registry.match_store.get(match_id)
    return MatchOutcome(m.id, m.tournament_id, m.a, m.b, m.team_size, m.mode, m.params, m.max_games, m.batch_pairs,
                        m.game_seconds, m.seed, m.status, m.decision, m.stats, m.created, m.finished,
                        bool(m.deterministic), float(m.opening_jitter))


def claim_match(registry: Registry, home: LeagueHome, match_id: int) -> Ownership:
    """Own match `match_id` (through its tournament's lock), or fail at once: it is finished or
    abandoned, or another process plays it (which is then left untouched)."""
    m = registry.match_store.get(match_id)
    if m.status in ("finished", "abandoned"):
        raise LeagueError(f"Match {match_id} is already {m.status}.")
    ownership = claim(home.root, "tournament", str(m.tournament_id), f"Match {match_id}")
    status = registry.match_store.get(match_id).status
    if status in ("finished", "abandoned"):  # ended by its previous owner while we waited for the lock
        ownership.release()
        raise LeagueError(f"Match {match_id} is already {status}.")
    return ownership


def abandon_match(registry: Registry, home: LeagueHome, match_id: int, reason: str) -> MatchOutcome:
    """End unfinished match `match_id` for good, unless another process plays it; its games stay recorded."""
    with claim_match(registry, home, match_id):
        registry.match_store.abandon(match_id, reason)
    return match_outcome(registry, match_id)


def start_or_resume_match(registry: Registry, home: LeagueHome, cfg: Config, a: str | None = None,
                          b: str | None = None, *, params: SprtParams | None = None,
                          max_games: int = DEFAULT_MAX_GAMES, batch_pairs: int | None = None, workers: int = 1,
                          resume: int | None = None, max_arenas: int = MAX_ARENAS_PER_WORKER,
                          b_any_stage: bool = False, deterministic: bool = True) -> MatchRun:
    """Match `resume`; else the match these settings describe (A, B, team size, SPRT parameters or
    none, `max_games`, game clock and seed, the last three from `cfg`, and how network agents play),
    resumed if unfinished and returned as it ended if finished; else a new one. An unfinished match
    is claimed before this returns. `params`: the SPRT (stops at a decision); None plays `max_games`
    games. `batch_pairs` (default: PAIRS_PER_WORKER per worker) is kept by the match: a resumed one
    uses its own. `b_any_stage`: B may be another team size's agent (see `check_agents`).
    `deterministic`: network agents play their most likely action (argmax, as tournaments and the
    RLBot export play); False: they sample it (kept by the match, so a resumed one plays as it began)."""
    if workers < 1:
        raise LeagueError(f"--workers must be at least 1, not {workers}.")
    if resume is not None:
        match_id, resumed = resume, True
        row = registry.match_store.get(match_id)
        if row.status == "abandoned":
            raise LeagueError(f"Match {match_id} is already abandoned.")
        if row.status != "finished":
            registry.game_store.check_usable(row.team_size, (row.a, row.b))  # before any game is played
    else:
        if a is None or b is None:
            raise LeagueError("Name the two agents of the match (or give --resume ID).")
        team_size = cfg.game.team_size
        a, b = check_agents(registry, a, b, team_size, b_any_stage)
        registry.game_store.check_usable(team_size, (a, b))  # damaged ones: one sentence, before any game is played
        check_max_games(max_games)
        if batch_pairs is None:
            batch_pairs = PAIRS_PER_WORKER * workers
        if not 1 <= batch_pairs <= MAX_BATCH_PAIRS:
            raise LeagueError(f"--batch-pairs must be between 1 and {MAX_BATCH_PAIRS:,}, not {batch_pairs:,}.")
        settings = MatchSettings(a, b, team_size, "sprt" if params else "fixed", params_json(params), max_games,
                                 float(cfg.game.game_seconds), cfg.seed, deterministic,
                                 float(cfg.game.opening_jitter))
        row, created = registry.match_store.open(settings, batch_pairs, cfg.to_dict())
        match_id, resumed = row.id, not created
    match = match_outcome(registry, match_id)
    recorded = len(registry.game_store.games(tournament_id=match.tournament_id))
    if match.status == "finished":
        return MatchRun(match_id, resumed, True, recorded, match, iter(()))
    ownership = claim_match(registry, home, match_id)
    tick_skip = registry.tournament_store.get(match.tournament_id).config["game"]["tick_skip"]
    batches = ownership.holding(_play(registry, home, match, tick_skip, workers, max_arenas))
    return MatchRun(match_id, resumed, False, recorded, match, batches)


def play_match(home: LeagueHome, registry: Registry, cfg: Config, a: str, b: str, params: SprtParams | None,
               max_games: int = DEFAULT_MAX_GAMES, *, batch_pairs: int | None = None, workers: int = 1,
               max_arenas: int = MAX_ARENAS_PER_WORKER, b_any_stage: bool = False,
               deterministic: bool = True) -> MatchOutcome:
    """Play (or resume, or look up) the match to its end; see `start_or_resume_match`."""
    run = start_or_resume_match(registry, home, cfg, a, b, params=params, max_games=max_games,
                                batch_pairs=batch_pairs, workers=workers, max_arenas=max_arenas,
                                b_any_stage=b_any_stage, deterministic=deterministic)
    for _ in run.batches:
        pass
    return match_outcome(registry, run.id)


def run_sprt_match(home: LeagueHome, registry: Registry, cfg: Config, a: str, b: str, params: SprtParams,
                   max_games: int = DEFAULT_MAX_GAMES, **kwargs) -> MatchOutcome:
    """An SPRT match of A against B (team size, game clock and seed from `cfg`) played to its
    decision or `max_games`: `outcome.decision` is "H1" (A is at least params.elo1 better),
    "H0" (A is no better than params.elo0) or "inconclusive". Asked again with the same
    arguments it resumes the match, or returns the finished one's outcome without playing."""
    return play_match(home, registry, cfg, a, b, params, max_games, **kwargs)


def match_stats(games: list[Game], a: str, pairs: int, params: SprtParams | None) -> MatchStats:
    """The statistics of the complete pairs among the first `pairs` of a match's recorded `games`."""
    score: dict[int, float] = {}
    for g in games:
        a_goals, other = (g.blue_goals, g.orange_goals) if g.blue == a else (g.orange_goals, g.blue_goals)
        score[g.schedule_index] = 1.0 if a_goals > other else 0.5 if a_goals == other else 0.0
    counts = [0] * 5
    for p in range(pairs):
        if 2 * p in score and 2 * p + 1 in score:
            counts[pair_score(score[2 * p], score[2 * p + 1])] += 1
    if params is not None:
        r = sprt_result(counts, params)
        return MatchStats(tuple(counts), r.games, r.llr, r.elo, *r.elo_95, r.nelo, *r.nelo_95, r.los)
    e = elo_estimate(counts)
    return MatchStats(tuple(counts), 2 * sum(counts), None, e.elo, *e.elo_95, e.nelo, *e.nelo_95, e.los)


def _play(registry: Registry, home: LeagueHome, match: MatchOutcome, tick_skip: int, workers: int,
          max_arenas: int) -> Iterator[MatchProgress]:
    store, tid, k = registry.match_store, match.tournament_id, match.batch_pairs
    schedule = round_robin([match.a, match.b], match.max_games, match.seed)  # pair p: games 2p (A blue), 2p + 1
    pairs = match.max_games // 2
    batches = math.ceil(pairs / k)
    spec = GameSpec(team_size=match.team_size, tick_skip=tick_skip, mode="timed", game_seconds=match.game_seconds,
                    opening_jitter=match.opening_jitter)
    start = time.perf_counter()
    store.set_status(match.id, "running")
    pool = None
    try:
        for batch in range(batches):
            hi = min(pairs, (batch + 1) * k)
            done = {g.schedule_index for g in registry.game_store.games(tournament_id=tid)}
            missing = [g for g in schedule[2 * batch * k:2 * hi] if g.index not in done]
            if missing:
                if pool is None:
                    hands = max(1, min(workers, 2 * k))
                    arenas = min(max_arenas, math.ceil(2 * k / hands))
                    pool = GamePool({n: registry.agent_store.get(n) for n in member_names((match.a, match.b))}, spec, home.root,
                                      f"replays/tournament-{tid}", {"tournament_id": tid}, hands, arenas,
                                      f"run the same command again to resume match {match.id}",
                                      deterministic=match.deterministic)
                for outcome in pool.play(missing):
                    record_outcome(registry, tid, outcome)
            stats = match_stats(registry.game_store.games(tournament_id=tid), match.a, hi, match.params)
            store.save_stats(match.id, stats)
            decision = decide(stats.llr, match.params) if match.params else None
            yield MatchProgress(batch + 1, batches, len(missing), stats, decision, time.perf_counter() - start)
            if decision:
                store.finish(match.id, decision, stats, f"SPRT accepted {decision} after {stats.games} games "
                                                        f"(LLR {stats.llr:.2f}).")
                return
        final = "inconclusive" if match.params else None
        message = (f"SPRT inconclusive at the cap of {match.max_games} games (LLR {stats.llr:.2f})."
                   if match.params else f"Fixed match of {match.max_games} games.")
        store.finish(match.id, final, stats, message)
    except BaseException:
        store.set_status(match.id, "interrupted")
        raise
    finally:
        if pool is not None:
            pool.close()

