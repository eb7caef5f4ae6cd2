"""The game engine: RocketSim games (`sim`, `game`, `mutators`, `rewards`, `rules`), the
vectorized runner (`vector`, `backends`, `worker`, `shared`, `procs`), where work runs (`placement`,
`cores`, the worker pool `pool`, `ray_cluster`), RLGym v2 adapters
(`gym_env`, `gym_state`, `rlgym_state`, `rlgym_obs`). It never imports
the league's stores or the contests built on it (arena's other modules); import-linter checks it."""
