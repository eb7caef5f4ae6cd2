"""Starting training in a league home: the library behind `league train`.

    cfg = train_config(home, "1v1")
    budget = Budget.from_flags(None, 10.0, Budget.from_config(cfg.training))   # --minutes 10
    SelfPlayTrainer(cfg, home, Registry.open(home.db_path, cfg.ratings)).run(budget)

    run_curriculum(home, None, minutes=60)   # the shipped configs/curriculum.yaml

Light at import time: torch and RocketSim are imported by the functions that train.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from league.config import Config, load_config
from league.home import LeagueHome
from league.registry import Registry
from training.progress import OnEvent


def train_config(home: LeagueHome, stage: str, *, user_file: Path | None = None,
                 overrides: dict[str, Any] | None = None, sets: list[str] | None = None) -> Config:
    """A self-play run's config, loaded once: configs/ and the stage, the league's own layer, `user_file`, then
    `overrides` (dotted keys; None values are left out) and `sets` ("KEY=VALUE"). The run's budget is not
    config: the command makes it (training.budget.Budget.from_flags) and hands it to the trainer."""
    from training.accel import cuda_available  # torch: only when a run is configured

    return load_config(stage=stage, user_file=user_file, home_file=home.config_path,
                       overrides={k: v for k, v in (overrides or {}).items() if v is not None}, sets=sets,
                       gpu=cuda_available)


def run_curriculum(home: LeagueHome, file: Path | None, *, name: str | None = None, user_file: Path | None = None,
                   minutes: float | None = None, init_from: str | None = None,
                   overrides: dict[str, Any] | None = None, sets: list[str] | None = None,
                   on_event: OnEvent | None = None):
    """Run (or resume) the curriculum in `file` (default: the shipped configs/curriculum.yaml) and
    return its training.curriculum.CurriculumResult.

    `name` runs the file under another name; `minutes` bounds this run's wall-clock time (None:
    to the curriculum's end); `init_from` starts its first stage from that agent's weights;
    `user_file`, `overrides` and `sets` are layered over every stage's config. Every stage's
    config is loaded once, and so validated, before the first event reaches `on_event`.
    """
    from training.curriculum import CurriculumTrainer, stage_configs  # torch: only when a curriculum runs
    from training.curriculum_spec import load_curriculum

    spec, source = load_curriculum(file, name=name)
    configs = stage_configs(spec, home, user_file=user_file, overrides=overrides, sets=sets)
    registry = Registry.open(home.db_path, configs[0].ratings)
    trainer = CurriculumTrainer(spec, home, registry, source=source, minutes=minutes or 0.0, init_from=init_from,
                                on_event=on_event, configs=configs, sets=sets)
    return trainer.run()
