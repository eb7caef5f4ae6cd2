"""Round-robin tournament schedules (pure).

Every pairing of the entrants plays N games. Games come in mirrored pairs, as engine-testing
tools play openings: the same seed (same kickoff and start state) once with each agent on
blue, so side and start luck cancel. With an odd N the unpaired last game's blue side
alternates between pairings. Seeds derive from the tournament seed and the two names, so a
pairing's games do not change when other entrants are added.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations


@dataclass(frozen=True)
class ScheduledGame:
    index: int  # position in the schedule; unique per tournament
    blue: str
    orange: str
    seed: int


def game_seed(tournament_seed: int, a: str, b: str, mirror_pair: int) -> int:
    """A 31-bit seed for the `mirror_pair`-th pair of games between a and b (order-free)."""
    first, second = sorted((a, b))
    digest = hashlib.sha256(f"{tournament_seed}:{first}:{second}:{mirror_pair}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def round_robin(entrants: Sequence[str], games_per_pair: int, seed: int) -> list[ScheduledGame]:
    """The whole schedule: games ordered round by round so every pairing progresses together."""
    if len(set(entrants)) != len(entrants):
        raise ValueError("entrants must be distinct")
    if games_per_pair < 1:
        raise ValueError("games_per_pair must be at least 1")
    pairs = list(combinations(entrants, 2))
    games: list[ScheduledGame] = []
    for k in range(games_per_pair):
        for p, (a, b) in enumerate(pairs):
            mirror_pair, second_leg = divmod(k, 2)
            unpaired = k == games_per_pair - 1 and games_per_pair % 2 == 1
            a_is_blue = (p % 2 == 0) if unpaired else not second_leg
            blue, orange = (a, b) if a_is_blue else (b, a)
            games.append(ScheduledGame(len(games), blue, orange, game_seed(seed, a, b, mirror_pair)))
    return games
