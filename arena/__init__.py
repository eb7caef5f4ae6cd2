"""Where games are played, in two parts kept apart.

`arena.engine` is the game engine: RocketSim game construction, the vectorized runner with its
worker processes and shared memory, the RLGym v2 adapters, and the one worker pool (local
processes or Ray actors) that contests and training run their workers on. It reads agents and the league core's
plain values (config, game values, errors), never the league's stores or the contests.

`replay` is the replay file format, beside both: written by the contests, read by the dashboard,
and kept light (an import-linter contract) since the dashboard imports nothing else of arena.

The contests are built on it here: `play` (the one loop of N games between policies),
`pairings` (evaluation pairings, kept as results), `tournament` (round robins: schedule,
recording, resuming; `tournament_play` plays and records a game, `game_pool` plays scheduled
games on the worker pool), `match` (a head-to-head match, fixed or
SPRT), `promotion` (testing and promoting a candidate) and `watch` (a game played at the speed of
its clock for watching, a replay sent to an external viewer); `viewers` turns a moment of a game
into each external 3D viewer's packets (RocketSimVis, RLViser).
"""
