"""Trained agents against the baseline ladder, at any team size: the figures a curriculum's report
gives (each stage's final agent against `random`, `atba`, `rule` and `rule-pro`), and whether one
network plays a team size it was never trained for.

    python -m training.measure.ladder --home DIR --stage 3v3 AGENT [AGENT ...] [--games 40] [--seconds 60] [--argmax]

Each agent plays `--games` games (half on each side, sampled actions, as training's evaluation
plays; `--argmax`: most likely actions, as tournaments and the RLBot export play) against each
opponent, all at once on one runner. Games of an agent at its own team size
are recorded and rated like any evaluation game; an agent playing another team size (a 1v1
agent dropped into 2v2) is played but not recorded, so its ratings stay those of its stage.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.loading import load_policy
from league.config import STAGES, team_size_of
from league.errors import LeagueError
from league.home import LeagueHome
from league.registry import Registry
from league.results import Record
from training.evaluation import Player, play_recorded

LADDER = ("random", "atba", "rule", "rule-pro")


@dataclass(frozen=True, kw_only=True)
class LadderResult(Record):
    """An agent's record (league.results) and goals against one opponent."""

    agent: str
    opponent: str
    team_size: int
    goals_for: int
    goals_against: int
    recorded: bool


def play_ladder(registry: Registry, home: LeagueHome, agents: list[str], team_size: int, games: int = 40,
                game_seconds: float = 60.0, opponents: tuple[str, ...] = LADDER, seed: int = 2000,
                deterministic: bool = False) -> list[LadderResult]:
    """Every agent against every opponent at `team_size`; games at an agent's own team size are recorded."""
    names = list(dict.fromkeys([*agents, *opponents]))
    policies = {n: load_policy(registry.agent_store.get(n), home_root=home.root) for n in names}
    results = []
    for own_size in (True, False):  # recorded games, then the ones outside an agent's team size
        mine = [a for a in agents if (registry.agent_store.get(a).team_size in (None, team_size)) == own_size]
        matchups = [(Player(a, policies[a]), Player(o, policies[o])) for a in mine for o in opponents]
        if not matchups:
            continue
        played = play_recorded(registry if own_size else None, matchups, games, team_size, game_seconds, seed,
                               deterministic=deterministic)
        for (ours, theirs), goals in zip(matchups, played):
            results.append(LadderResult(
                **Record.from_goals(goals).counts(), agent=ours.name, opponent=theirs.name, team_size=team_size,
                goals_for=sum(x for x, _ in goals), goals_against=sum(y for _, y in goals), recorded=own_size))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("agents", nargs="+")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--stage", choices=STAGES, required=True)
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--opponents", default=",".join(LADDER))
    parser.add_argument("--argmax", action="store_true",
                        help="every policy takes its most likely action (as tournaments and the RLBot export play)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    home = LeagueHome(args.home)
    try:
        registry = Registry.open(home.db_path)
        try:
            results = play_ladder(registry, home, args.agents, team_size_of(args.stage), args.games, args.seconds,
                                  tuple(args.opponents.split(",")), deterministic=args.argmax)
        finally:
            registry.close()
    except LeagueError as exc:
        raise SystemExit(f"Error: {exc}") from None
    if args.json:
        print(json.dumps([asdict(r) | {"win_rate": r.win_rate} for r in results], indent=2))
        return
    print(f"{'agent':32} {'opponent':10} {'W-D-L':>9} {'win':>5} {'goals':>9}  ({args.stage}, {args.games} games "
          f"of {args.seconds:g} s each, {'argmax' if args.argmax else 'sampled'} actions)")
    for r in results:
        note = "" if r.recorded else "  (not its team size: not recorded)"
        print(f"{r.agent:32} {r.opponent:10} {str(r):>9} {r.win_rate:5.0%} "
              f"{f'{r.goals_for}:{r.goals_against}':>9}{note}")


if __name__ == "__main__":
    main()
