"""The league database's migrations, in order: one module a step (m0001_initial.py, ...), each a
`migrate(db)` function, as sqlite-utils' Migrations are written (docs/schema.md).

A step, once released, is never edited: a change to the schema is a new module, added to STEPS.
The constants a step wrote into its CHECK constraints live in its module, as the step left them;
league.schema re-exports the ones the stores read.
"""

from __future__ import annotations

from sqlite_utils.migrations import Migrations

from league.migrations import (
    m0001_initial,
    m0002_payoff,
    m0003_training_runs,
    m0004_curriculum,
    m0005_tournament_abandon,
    m0006_exports,
    m0007_matches,
    m0008_promotions,
    m0009_game_members,
    m0010_probes,
    m0011_league_roles,
    m0012_match_play,
    m0013_panels,
    m0014_crowning,
    m0015_panel_openings,
)

STEPS = (m0001_initial, m0002_payoff, m0003_training_runs, m0004_curriculum, m0005_tournament_abandon, m0006_exports,
         m0007_matches, m0008_promotions, m0009_game_members, m0010_probes, m0011_league_roles, m0012_match_play,
         m0013_panels, m0014_crowning, m0015_panel_openings)

migrations = Migrations("rl-league")
for _step in STEPS:
    # The name each step is recorded under in _sqlite_migrations: its module's, less the "m" ("0001_initial").
    migrations(name=_step.__name__.rsplit(".", 1)[1][1:])(_step.migrate)
