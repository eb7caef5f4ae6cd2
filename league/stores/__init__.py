"""The league database as a few small stores sharing one connection and one transaction.

    database.py     opening the file safely; the shared connection and transaction()
    agents.py       agents (versions, status, lineage, checkpoints)
    games.py        games and the Elo/TrueSkill ratings and rating history they make
    payoff.py       each learner's decayed results against its opponents
    runs.py         training runs' headline metrics
    curricula.py    curricula, their stages and gate checks
    tournaments.py  tournaments
    exports.py      exports made (RLBot bot folders)
    matches.py      head-to-head matches (a tournament of two) and their SPRT statistics
    promotions.py   champion changes, by hand or decided by an SPRT match, and the tests that failed

Each store hands back frozen dataclasses, never dict rows. league.registry.Registry opens a
league and holds one of each, as `reg.agent_store`, `reg.game_store`, ...: the one door callers
use (the registry's docstring says why); the schema is league/schema.py
(documented in docs/schema.md). Read models over several tables live beside them in league/:
standings.py (leaderboards), game_search.py (game listings), climb.py (a run against the baselines).
"""
