"""Where an SPRT ended, in words: the one wording of `league match`, `league promote --sprt`, the
dashboard's Matches page, promotion during training and the curriculum gate's SPRT criterion.

    sprt_verdict("H0", 400)                               # "H0 accepted"
    sprt_verdict("H1", 400, SprtParams(), "v13", "v12")   # "H1 accepted: v13 is at least 30 normalized Elo better than v12"
    match_verdict("sprt", "finished", "inconclusive", None, "v13", "v12", 400, 400)
                                                          # "Inconclusive: no decision within 400 games."
"""

from __future__ import annotations

from league.sprt_params import SprtParams


def sprt_verdict(decision: str | None, max_games: int, params: SprtParams | None = None, a: str | None = None,
                 b: str | None = None) -> str:
    """"H1 accepted", "H0 accepted", or "no decision within `max_games` games" (any other decision:
    the match reached its cap). Given the parameters and the two agents (A tested against B), an
    accepted hypothesis says what it means: "H1 accepted: A is at least 30 normalized Elo better than B"."""
    if decision not in ("H1", "H0"):
        return f"no decision within {max_games} games"
    said = f"{decision} accepted"
    if params is None or a is None or b is None:
        return said
    if decision == "H1":
        return f"{said}: {a} is at least {params.elo1:g} {params.model} Elo better than {b}"
    return f"{said}: {a} is no more than {params.elo0:g} {params.model} Elo better than {b}"


def match_verdict(mode: str, status: str, decision: str | None, params: SprtParams | None, a: str, b: str,
                  games: int, max_games: int) -> str:
    """One sentence for where a match (`league match A B`) ended or stands: its SPRT's verdict, or a
    fixed match's games. `mode`: "sprt" or "fixed"; `params`: the SPRT's (None when they cannot be read)."""
    if mode == "sprt":
        if decision in ("H1", "H0") and params is not None:
            return f"{sprt_verdict(decision, max_games, params, a, b)}."
        if decision == "inconclusive":
            return f"Inconclusive: {sprt_verdict(decision, max_games)}."
        if decision:
            return f"SPRT decision {decision} (its parameters cannot be read)."
        return f"SPRT {status}: no decision yet ({games} of at most {max_games} games counted)."
    if status == "finished":
        return f"Fixed match: {games} games of {a} against {b} (no SPRT)."
    return f"Fixed match {status}: {games} of {max_games} games counted (no SPRT)."
