"""Round-robin tournaments: plan, play in parallel worker processes, record, resume.

    run = start_or_resume_tournament(registry, home, cfg, games_per_pair=25, workers=2)
    for outcome in run.games: ...
    read_tournament_standings(registry.db, run.id, registry.ratings_cfg)  # league.standings

or, step by step, `open_tournament(...)` then `run_tournament(registry, home, tid, workers=2)`.

Nothing is lost: a worker writes each game's replay atomically, then the driver (the only
writer of the database) records the game and its rating updates in one transaction, keyed by
the game's schedule index (unique per tournament). Whatever kills the driver, running the
same tournament again plays exactly the games that are not recorded yet; since every game
replays exactly from its seed, the results equal an uninterrupted run's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from arena.engine.game import GameSpec
from arena.tournament_play import GameOutcome
from arena.engine.placement import Placement
from arena.game_pool import GamePool, contest_placement
from league.config import Config
from league.errors import LeagueError
from league.home import LeagueHome
from league.locks import Ownership, claim
from league.registry import Agent, GameRecord, Registry, Tournament
from league.schedule import ScheduledGame, planned_games, round_robin
from league.teams import member_names, members, parse_side

MAX_ARENAS_PER_WORKER = 64


def not_this_size(agent: Agent, team_size: int) -> str:
    """Why `agent` cannot play `team_size`v`team_size`, in one sentence."""
    if agent.team_size is None:
        sizes = ", ".join(f"{n}v{n}" for n in agent.team_sizes or [])
        return f"{agent.name!r} is a community bot that plays {sizes} only, not {team_size}v{team_size}."
    return f"{agent.name!r} is a {agent.stage} agent, not {team_size}v{team_size}."


def resolve_entrants(registry: Registry, team_size: int, agents: list[str] | None, baselines: bool) -> list[str]:
    """Explicit names (checked, retired refused), else every active agent of the stage (+ baselines)."""
    if agents:
        out = []
        for name in agents:
            check_member(registry, name, team_size)
            out.append(name)
    else:
        out = [a.name for a in registry.agent_store.all(team_size)
               if a.plays(team_size) and (baselines or a.team_size is not None)]
    if len(set(out)) < 2:
        raise LeagueError(f"A tournament needs at least two entrants; found {len(set(out))} "
                          f"({', '.join(out) or 'none'}).")
    return list(dict.fromkeys(out))


def check_member(registry: Registry, name: str, team_size: int, what: str = "enter it in a tournament",
                 any_size: bool = False) -> None:
    """`name` is an agent that is not retired and plays `team_size` unless `any_size` (a LeagueError
    sentence otherwise)."""
    agent = registry.agent_store.get(name)
    if agent.status == "retired":
        raise LeagueError(f"{name!r} is retired; reactivate it to {what}.")
    if not any_size and not agent.plays(team_size):
        raise LeagueError(not_this_size(agent, team_size))


def resolve_side(registry: Registry, text: str, team_size: int, what: str = "enter it in a tournament") -> str:
    """`text` as a side of `team_size` (one agent, or a team of `team_size` members joined by "+",
    league.teams) whose every member exists, is not retired and plays the team size."""
    side = parse_side(text, team_size)
    for name in members(side):
        check_member(registry, name, team_size, what)
    return side


def resolve_teams(registry: Registry, team_size: int, teams: list[str]) -> list[str]:
    """A tournament's named teams (each a side, see `resolve_side`): at least two, distinct, and no
    agent in two of them (an agent plays on one side of a game)."""
    out = [resolve_side(registry, text, team_size) for text in teams]
    for i, a in enumerate(out):
        for b in out[:i]:
            if a == b:
                raise LeagueError(f"The team {a!r} is named twice.")
            shared = [m for m in members(a) if m in members(b)]
            if shared:
                raise LeagueError(f"{shared[0]!r} is in two teams ({b!r} and {a!r}); an agent plays in one team "
                                  "of a tournament.")
    if len(out) < 2:
        raise LeagueError(f"A tournament needs at least two teams; found {len(out)}.")
    return out


def open_tournament(registry: Registry, cfg: Config, team_size: int, games_per_pair: int, seed: int,
                    entrants: list[str], name: str | None = None,
                    extra: dict[str, Any] | None = None) -> tuple[int, bool]:
    """The id of the matching unfinished tournament (resumed) or of a new one; and whether it resumed.
    `extra`: keys stored beside the config (a title playoff's contenders, arena.crown)."""
    matches = registry.match_store.tournament_ids()  # a match's tournament is resumed by `league match` only
    for t in reversed(registry.tournament_store.all()):
        if (t.status in ("running", "interrupted") and t.id not in matches and t.team_size == team_size
                and t.seed == seed and t.games_per_pair == games_per_pair and t.entrants == entrants):
            return t.id, True
    planned = planned_games(len(entrants), games_per_pair)
    tid = registry.tournament_store.create(name or f"{team_size}v{team_size} round robin", team_size, seed,
                                           games_per_pair, planned, entrants, {**cfg.to_dict(), **(extra or {})})
    return tid, False


def pending_games(registry: Registry, tid: int) -> list[ScheduledGame]:
    t = registry.tournament_store.get(tid)
    schedule = round_robin(t.entrants, t.games_per_pair, t.seed)
    done = {g.schedule_index for g in registry.game_store.games(tournament_id=tid)}
    return [g for g in schedule if g.index not in done]


def claim_tournament(registry: Registry, home: LeagueHome, tid: int) -> Ownership:
    """Own tournament `tid` for playing it, or fail at once: it is finished or abandoned, or
    another process plays it (which is then left untouched)."""
    t = registry.tournament_store.get(tid)
    if t.status in ("finished", "abandoned"):
        raise LeagueError(f"Tournament {tid} is already {t.status}.")
    ownership = claim(home.root, "tournament", str(tid), f"Tournament {tid}")
    status = registry.tournament_store.get(tid).status
    if status in ("finished", "abandoned"):  # ended by its previous owner while we waited for the lock
        ownership.release()
        raise LeagueError(f"Tournament {tid} is already {status}.")
    return ownership


@dataclass(frozen=True)
class TournamentRun:
    """A tournament claimed for playing: what it is, and its pending games, played (and recorded)
    one by one as `games` is iterated."""

    id: int
    resumed: bool
    entrants: tuple[str, ...]
    planned_games: int
    to_play: int
    game_seconds: float
    games: Iterator[GameOutcome]
    opening_jitter: float = 0.0  # game.opening_jitter as the tournament records it


def start_or_resume_tournament(registry: Registry, home: LeagueHome, cfg: Config, *, resume: int | None = None,
                               games_per_pair: int = 2, agents: list[str] | None = None, baselines: bool = True,
                               teams: list[str] | None = None, workers: int = 1, placement: str | Placement = Placement.PROCESSES,
                               address: str | None = None,
                               max_arenas: int = MAX_ARENAS_PER_WORKER) -> TournamentRun:
    """Tournament `resume`; else the unfinished one these parameters describe (same team size, seed,
    games per pair and entrants); else a new one. It is claimed before this returns.

    The team size, seed and tick skip come from `cfg` (whose game clock a new tournament records;
    a resumed one keeps its own). `agents`: the entrants (default: the stage's active agents, and
    the baselines unless `baselines` is false). `teams`: instead, a round robin of these sides (mixed
    teams such as "A+necto", league.teams; see `resolve_teams`). A Ray `address` is probed before
    anything is stored.
    """
    placement = contest_placement(placement)
    if placement is Placement.RAY and address:
        from arena.engine.ray_cluster import check_address

        check_address(address)
    if resume is not None:
        refuse_match(registry, resume, "resume")
        tid, resumed = resume, True
        t = registry.tournament_store.get(tid)
        if t.status not in ("finished", "abandoned"):  # damaged ratings: one sentence, before any game
            registry.game_store.check_usable(t.team_size, t.entrants)
    else:
        team_size = cfg.game.team_size
        if teams is not None and agents is not None:
            raise LeagueError("Give the entrants as agents or as teams, not both.")
        entrants = (resolve_teams(registry, team_size, teams) if teams is not None else
                    resolve_entrants(registry, team_size, agents, baselines))
        registry.game_store.check_usable(team_size, entrants)  # damaged ones: one sentence, before anything is stored
        tid, resumed = open_tournament(registry, cfg, team_size, games_per_pair, cfg.seed, entrants)
    game_seconds = registry.tournament_store.get(tid).config["game"]["game_seconds"]
    games = run_tournament(registry, home, tid, workers, game_seconds, cfg.game.tick_skip, placement=placement,
                           address=address, max_arenas=max_arenas)
    t = registry.tournament_store.get(tid)
    return TournamentRun(id=tid, resumed=resumed, entrants=tuple(t.entrants),
                         planned_games=t.planned_games, to_play=len(pending_games(registry, tid)),
                         game_seconds=game_seconds, games=games, opening_jitter=t.opening_jitter)


def abandon_tournament(registry: Registry, home: LeagueHome, tid: int, reason: str) -> Tournament:
    """End unfinished tournament `tid` for good, unless another process is playing it; its games stay recorded."""
    refuse_match(registry, tid, "abandon")
    with claim_tournament(registry, home, tid):
        return registry.tournament_store.abandon(tid, reason)


def refuse_match(registry: Registry, tid: int, verb: str) -> None:
    """A LeagueError if tournament `tid` is a match's: only `league match` plays or ends it."""
    match = registry.match_store.for_tournament(tid)
    if match is not None:
        raise LeagueError(f"Tournament {tid} is match {match.id} ({match.a} vs {match.b}); "
                          f"{verb} it with `league match --{verb} {match.id}`.")


def run_tournament(registry: Registry, home: LeagueHome, tid: int, workers: int,
                   game_seconds: float, tick_skip: int = 8, placement: str | Placement = Placement.PROCESSES,
                   address: str | None = None, max_arenas: int = MAX_ARENAS_PER_WORKER) -> Iterator[GameOutcome]:
    """Play every pending game of tournament `tid`; yields each outcome after it is recorded.

    The tournament is claimed before this returns (so a tournament another process is playing
    fails here, untouched), and released when the iterator ends. `placement`: where the workers run,
    Placement.PROCESSES (worker processes here) or RAY (Ray workers on the cluster at `address`, or a
    local Ray instance without one). A worker plays up to `max_arenas` games at once; the results of a round
    arrive together.
    """
    placement = contest_placement(placement)
    ownership = claim_tournament(registry, home, tid)
    return ownership.holding(_play(registry, home, tid, workers, game_seconds, tick_skip, placement, address,
                                   max_arenas))


def _play(registry: Registry, home: LeagueHome, tid: int, workers: int, game_seconds: float, tick_skip: int,
          placement: Placement, address: str | None, max_arenas: int) -> Iterator[GameOutcome]:
    t = registry.tournament_store.get(tid)
    todo = pending_games(registry, tid)
    registry.tournament_store.set_status(tid, "running")
    if not todo:
        registry.tournament_store.set_status(tid, "finished")
        return
    spec = GameSpec(team_size=t.team_size, tick_skip=tick_skip, mode="timed", game_seconds=game_seconds,
                    opening_jitter=t.opening_jitter)
    agents = {name: registry.agent_store.get(name) for name in member_names(t.entrants)}
    hands = max(1, min(workers, len(todo)))
    per_worker = math.ceil(len(todo) / hands)
    arenas = min(max_arenas, per_worker)
    arenas = math.ceil(per_worker / math.ceil(per_worker / arenas))  # equal rounds, few idle arenas
    try:
        with GamePool(agents, spec, home.root, f"replays/tournament-{tid}", {"tournament_id": tid}, hands, arenas,
                      f"run the same command again to resume tournament {tid}", placement, address) as pool:
            for outcome in pool.play(todo):
                yield record_outcome(registry, tid, outcome)
    except BaseException:
        registry.tournament_store.set_status(tid, "interrupted")
        raise
    registry.tournament_store.set_status(tid, "finished" if not pending_games(registry, tid) else "interrupted")


def record_outcome(registry: Registry, tid: int, outcome: GameOutcome) -> GameOutcome:
    """Record a game of tournament `tid` (its replay written) and its rating updates, in one transaction."""
    g = outcome.game
    registry.game_store.record(GameRecord(
        blue=g.blue, orange=g.orange, team_size=registry.tournament_store.get(tid).team_size, seed=g.seed,
        blue_goals=outcome.blue_goals, orange_goals=outcome.orange_goals, length_seconds=outcome.length_seconds,
        origin="tournament", tournament_id=tid, schedule_index=g.index, replay_path=outcome.replay_path))
    return outcome
