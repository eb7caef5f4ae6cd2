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

from league.errors import LeagueError

# Bounds on a tournament's size, checked before anything is planned: the schedule is held in
# memory, and every game becomes a database row and a replay file. 100,000 five-minute games
# are weeks of play on a workstation; anything larger is a typo.
MAX_GAMES_PER_PAIR = 10_000
MAX_TOURNAMENT_GAMES = 100_000


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


def planned_games(entrants: int, games_per_pair: int) -> int:
    """The number of games of a round robin, or a LeagueError for a size nobody could play."""
    if not 1 <= games_per_pair <= MAX_GAMES_PER_PAIR:
        raise LeagueError(f"Games per pairing must be between 1 and {MAX_GAMES_PER_PAIR:,}, got {games_per_pair:,}.")
    total = games_per_pair * entrants * (entrants - 1) // 2
    if total > MAX_TOURNAMENT_GAMES:
        raise LeagueError(f"{entrants} entrants playing {games_per_pair:,} games per pairing make {total:,} games, "
                          f"more than a tournament may hold ({MAX_TOURNAMENT_GAMES:,}); play fewer games or "
                          "enter fewer agents.")
    return total


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
