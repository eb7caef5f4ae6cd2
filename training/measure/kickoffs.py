"""What the community bots' scripted kickoffs change (docs/community.md, "What the adapters do not
reproduce"): each bot with its bot.py's kickoff script played at the runner's step
(agents.community.kickoff) against the same bot with the network playing every kickoff, and both
against the other bot and `rule-pro`.

    python -m training.measure.kickoffs --bots ../shared/bots [--games 40] [--seconds 60] [--seed 7]

One-minute 1v1 games by default, half of each pairing with the first-named player as blue. The
bots are read straight from the botpack folder by the league's restricted readers (nothing is
unpickled or run) and nothing is recorded in any league.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from agents.baselines import make_baseline
from agents.community.bots import KINDS
from agents.community.install import community_policy, find_weights
from agents.community.kickoff import ScriptedKickoffs
from agents.community.tensors import read_weights_file
from arena.pairings import Pairing, play_pairings
from league.results import Record
from training.measure.learning import COMMUNITY


@dataclass(frozen=True, kw_only=True)
class KickoffResult(Record):
    """A player's record (league.results) and goals against one opponent."""

    player: str
    opponent: str
    goals_for: int
    goals_against: int


def bot_policies(bots: Path) -> dict:
    """Each bot twice: as the league plays it (the network's kickoffs) and with its scripted kickoff."""
    out = {}
    for kind, folder in COMMUNITY.items():
        source = find_weights(KINDS[kind], bots / folder)
        bot = community_policy(kind, KINDS[kind].read_weights(source, read_weights_file(source)), kind)
        out[kind], out[f"{kind}+kickoff"] = bot, ScriptedKickoffs(bot, kind)
    return out


def measure(bots: Path, games: int = 40, seconds: float = 60.0, seed: int = 7) -> list[KickoffResult]:
    policies = {**bot_policies(bots), "rule-pro": make_baseline("rule-pro")}
    plan = [("necto+kickoff", "necto"), ("element+kickoff", "element"),
            ("necto+kickoff", "element"), ("necto", "element"),
            ("element+kickoff", "necto"), ("element", "necto"),
            ("necto+kickoff", "rule-pro"), ("necto", "rule-pro"),
            ("element+kickoff", "rule-pro"), ("element", "rule-pro")]
    half = games // 2
    pairings = [Pairing(policies[a], policies[b], half) for a, b in plan]
    pairings += [Pairing(policies[b], policies[a], games - half) for a, b in plan]
    played = play_pairings(pairings, 1, seed, seconds, deterministic=True)
    out = []
    for k, (a, b) in enumerate(plan):
        scores = [(r.blue_goals, r.orange_goals) for r in played[k]]
        scores += [(r.orange_goals, r.blue_goals) for r in played[k + len(plan)]]
        out.append(KickoffResult(**Record.from_goals(scores).counts(), player=a, opponent=b,
                                 goals_for=sum(x for x, _ in scores), goals_against=sum(y for _, y in scores)))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=Path, required=True, help="the folder holding Necto/ and Element/")
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    for result in measure(args.bots, args.games, args.seconds, args.seed):
        print(json.dumps(asdict(result)))


if __name__ == "__main__":
    main()
