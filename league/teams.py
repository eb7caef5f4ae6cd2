"""Sides of a game: one agent playing every car, or a mixed team of members (pure).

A side is written as one agent name (`rule`: it drives every car of its side, as always) or, in
2v2 and 3v3, as exactly team-size distinct member names joined by "+" (`ppo-2v2-v4+necto`: car
slot 0 is the first member, slot 1 the second, ...). Agent names never hold "+" (league.names),
so a side's text is unambiguous wherever a name is stored or printed: schedules, tournament
entrants, replay names. A game is mixed when either side is a team of several members.
"""

from __future__ import annotations

from collections.abc import Iterable

from league.errors import LeagueError, quoted
from league.names import check_name

JOIN = "+"


def members(side: str) -> tuple[str, ...]:
    """The distinct agents of a side, in car-slot order (one name for a single-agent side)."""
    return tuple(side.split(JOIN))


def is_team(side: str) -> bool:
    """Whether `side` is a team of several members (a game with such a side is mixed)."""
    return JOIN in side


def cars(side: str, team_size: int) -> tuple[str, ...]:
    """Who drives each car slot of the side: a single agent every car, a team's members in order."""
    names = members(side)
    return names * team_size if len(names) == 1 else names


def member_names(sides: Iterable[str]) -> list[str]:
    """Every agent of `sides`, each once, in order of first appearance."""
    return list(dict.fromkeys(m for side in sides for m in members(side)))


def parse_side(text: str, team_size: int) -> str:
    """`text` as a side of `team_size`v`team_size` (names checked, spaces around "+" dropped), or a
    LeagueError saying what is wrong: a team needs exactly `team_size` distinct members."""
    names = [n.strip() for n in text.split(JOIN)]
    for name in names:
        if not name:
            raise LeagueError(f"The team {quoted(text)} has an empty name; join member names with '+', such as "
                              "'ppo-2v2-v4+necto'.")
        check_name(name)
    if len(names) == 1:
        return names[0]
    stage = f"{team_size}v{team_size}"
    if team_size == 1:
        raise LeagueError(f"The team {quoted(text)} is for 2v2 or 3v3; a 1v1 side is one agent.")
    if len(names) != team_size:
        raise LeagueError(f"The team {quoted(text)} has {len(names)} members; a {stage} team has {team_size} "
                          "(or give one agent to play every car).")
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise LeagueError(f"The team {quoted(text)} names {twice[0]!r} twice; a team's members are distinct "
                          "(give one agent alone to play every car).")
    return JOIN.join(names)


def check_apart(a: str, b: str) -> None:
    """A LeagueError when two sides share a member: an agent cannot play against itself in one game."""
    shared = [m for m in members(a) if m in members(b)]
    if shared and (is_team(a) or is_team(b)):
        raise LeagueError(f"{shared[0]!r} is on both sides ({quoted(a)} and {quoted(b)}); an agent plays on one side of a game.")
