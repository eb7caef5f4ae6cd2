"""League homes for the dashboard's roles, mixed-team and Nash-by-tournament views, written through the
stores (no training, no game played): what `league train --league FILE`, `league probe`, `league match
"A+necto" "B+C"` and `league tournament` record.

- `build_roles_league(root)`: a league of roles "roles" (a main agent, a main exploiter that reset once
  by `won`, a league exploiter), their snapshots, seconds and checks, and three probes (two of the
  league's snapshots, one of another agent); an older league "early" with only a main agent.
- `build_mixed_league(root)`: 2v2 games between mixed teams (one with a replay file), a game of two
  single agents, and a fixed match between two mixed teams.
- `build_sparse_league(root)`: 1v1 agents whose games outside tournaments leave most pairs unmet, and
  two tournaments: a full round robin of four and one whose pairs did not all meet.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dashboard_fixture import build_empty_league, play_fixture_match, synthetic_replay

from arena.replay import write_replay
from league.home import LeagueHome
from league.probes import ProbeResult
from league.registry import GameRecord, Registry
from league.stores.roles import RoleCheck

NECTO = {"community": {"kind": "necto", "title": "Necto", "team_sizes": [1, 2, 3], "licence": "CC BY-NC-SA 4.0"}}
ROLES_SPEC = {"name": "roles", "stage": "1v1", "slice_minutes": 5.0, "config": {}, "roles": [
    {"name": "main", "kind": "main", "share": 2.0},
    {"name": "exploiter", "kind": "main_exploiter", "share": 1.0, "check_games": 20, "reset_win_rate": 0.7,
     "max_steps": 12_000_000, "restart_from": "fresh"},
    {"name": "scout", "kind": "league_exploiter", "share": 1.0, "check_games": 20, "reset_win_rate": 0.6,
     "max_steps": 12_000_000, "restart_from": "main"}]}
ROLE_SECONDS = {"main": 1200.0, "exploiter": 540.0, "scout": 300.0}
# (role, restart, agent, steps, targets, W, D, L, reset): the league's checks, oldest first
ROLE_CHECKS = [
    ("exploiter", 1, "roles-exploiter-r1-v1", 50_000, ("roles-main-v1",), 8, 4, 8, ""),
    ("scout", 1, "roles-scout-r1-v1", 60_000, ("roles-main-v2", "rule"), 10, 2, 8, ""),
    ("exploiter", 1, "roles-exploiter-r1-v2", 100_000, ("roles-main-v2",), 15, 3, 2, "won"),
    ("exploiter", 2, "roles-exploiter-r2-v1", 40_000, ("roles-main-v4",), 3, 5, 12, ""),
]
# (target, probe, minutes, steps, W, D, L)
PROBES = [("roles-main-v2", "probe-roles-main-v2-1-v1", 10.0, 500_000, 23, 19, 58),
          ("roles-main-v4", "probe-roles-main-v4-1-v1", 10.0, 520_000, 20, 31, 49),
          ("solo-1v1-v1", "probe-solo-1v1-v1-1-v1", 5.0, 250_000, 40, 10, 50)]


def _add_run(reg: Registry, run: str, steps: list[int], parent: str | None = None) -> None:
    for k, trained in enumerate(steps, start=1):
        reg.agent_store.add(f"{run}-v{k}", "mlp", 1, steps_trained=trained, parent=f"{run}-v{k - 1}" if k > 1 else parent)


def build_roles_league(root: Path) -> LeagueHome:
    home = build_empty_league(root)
    reg = Registry.open(home.db_path)
    try:
        reg.role_store.start("early", 1, {"name": "early", "stage": "1v1", "roles": [
            {"name": "main", "kind": "main", "share": 1.0}]}, "configs/early.yaml", [("main", "main", "early-main")])
        reg.role_store.finish("early", "stopped", "the time budget is spent")
        _add_run(reg, "early-main", [30_000])
        roles = [("main", "main", "roles-main"), ("exploiter", "main_exploiter", "roles-exploiter-r1"),
                 ("scout", "league_exploiter", "roles-scout-r1")]
        reg.role_store.start("roles", 1, ROLES_SPEC, "configs/league-roles.yaml", roles)
        _add_run(reg, "roles-main", [100_000, 200_000, 300_000, 400_000])
        _add_run(reg, "roles-exploiter-r1", [50_000, 100_000])
        _add_run(reg, "roles-exploiter-r2", [40_000])
        _add_run(reg, "roles-scout-r1", [60_000], parent="roles-main-v2")
        _add_run(reg, "solo-1v1", [80_000])
        for role, seconds in ROLE_SECONDS.items():
            reg.role_store.add_seconds("roles", role, seconds)
        for role, restart, agent, steps, targets, w, d, l, reset in ROLE_CHECKS:
            check = RoleCheck(wins=w, draws=d, losses=l, league="roles", role=role, restart=restart, agent=agent,
                              steps=steps, targets=targets, reset=reset, created="")
            reg.role_store.record_check(check, (restart + 1, f"roles-{role}-r{restart + 1}") if reset else None)
        for target, probe, minutes, steps, w, d, l in PROBES:
            reg.agent_store.add(probe, "mlp", 1, steps_trained=steps, status="retired")
            reg.probe_store.add(ProbeResult(wins=w, draws=d, losses=l, target=target, probe=probe, team_size=1,
                                            minutes=minutes, steps=steps, seed=0))
        reg.role_store.finish("roles", "interrupted", "Ctrl-C")
    finally:
        reg.close()
    return home


@dataclass
class MixedLeague:
    home: LeagueHome
    replay_game: int  # ppo-2v2-v1+necto 2-1 rule+atba, with a replay file naming the teams
    match_id: int  # ppo-2v2-v1+necto against ppo-2v2-v2+rule, fixed, 4 games


# (blue, orange, blue goals, orange goals): 2v2 games outside tournaments
MIXED_GAMES = [("ppo-2v2-v1+necto", "rule+atba", 2, 1), ("ppo-2v2-v1+necto", "rule+atba", 0, 0),
               ("atba+ppo-2v2-v2", "ppo-2v2-v1+rule", 0, 1), ("ppo-2v2-v2", "necto", 1, 3),
               ("ppo-2v2-v1", "ppo-2v2-v2", 1, 0)]


def build_mixed_league(root: Path) -> MixedLeague:
    home = build_empty_league(root)
    reg = Registry.open(home.db_path)
    try:
        reg.agent_store.add("necto", "community", None, config=NECTO)
        reg.agent_store.add("ppo-2v2-v1", "mlp", 2, steps_trained=100_000)
        reg.agent_store.add("ppo-2v2-v2", "mlp", 2, steps_trained=200_000, parent="ppo-2v2-v1")
        replay_game = 0
        for seed, (blue, orange, bg, og) in enumerate(MIXED_GAMES, start=1):
            path = None
            if seed == 1:
                path = "replays/mixed/first.replay"
                write_replay(home.root / path, synthetic_replay(seed, blue, orange, 2, bg, og, 40.0))
            game = reg.game_store.record(GameRecord(blue, orange, 2, seed, bg, og, 40.0, replay_path=path))
            replay_game = replay_game or game
        match_id = play_fixture_match(reg, home, "ppo-2v2-v1+necto", "ppo-2v2-v2+rule", 2,
                                      [((1, 0), (0, 2)), ((2, 2), (1, 0))], None, max_games=4, batch_pairs=1, seed=5)
    finally:
        reg.close()
    return MixedLeague(home, replay_game, match_id)


@dataclass
class SparseLeague:
    home: LeagueHome
    round_robin: int  # tournament id: a, b, c, d, every pair met twice
    partial: int  # tournament id: a, b, e, where e never met b


def build_sparse_league(root: Path) -> SparseLeague:
    home = build_empty_league(root)
    reg = Registry.open(home.db_path)
    names = ["a", "b", "c", "d", "e", "f", "g", "h"]
    try:
        for name in names:
            reg.agent_store.add(name, "mlp", 1)
        seed = 0

        def game(blue: str, orange: str, bg: int, og: int, tournament: int | None = None) -> None:
            nonlocal seed
            seed += 1
            reg.game_store.record(GameRecord(blue, orange, 1, seed, bg, og, 60.0, tournament_id=tournament,
                                             origin="tournament" if tournament else "manual"))

        # outside tournaments: a chain, so most of the 8 agents' 28 pairs never met
        for blue, orange in zip(names, names[1:]):
            game(blue, orange, 1, 0)
        entrants = ["a", "b", "c", "d"]
        full = reg.tournament_store.create("four", 1, 1, 2, 12, entrants, {})
        strength = {"a": 3, "b": 2, "c": 1, "d": 0}
        for i, x in enumerate(entrants):
            for y in entrants[i + 1:]:
                for _ in range(2):
                    game(x, y, *((1, 0) if strength[x] > strength[y] else (0, 1)), tournament=full)
        partial = reg.tournament_store.create("three", 1, 2, 1, 3, ["a", "b", "e"], {})
        game("a", "b", 1, 1, tournament=partial)
        game("a", "e", 2, 0, tournament=partial)
    finally:
        reg.close()
    return SparseLeague(home, full, partial)
