"""Starting training in a league home: the library behind `league train`, one call per way to start it.

    run_one(home, "1v1", minutes=10)              # league train --stage 1v1 --minutes 10
    run_curriculum(home, None, minutes=60)        # the shipped configs/curriculum.yaml
    run_league(home, None, minutes=60)            # the shipped configs/league-roles.yaml
    train_config(home, "1v1")                     # a run's config alone (the one author of it)

Light at import time: torch and RocketSim are imported by the functions that train.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from league.config import Config, DistillConfig, StudentOf, load_config, stage_of
from league.home import LeagueHome
from league.registry import Registry
from league.errors import ConfigError, LeagueError
from training.budget import Budget
from training.progress import OnEvent, OnProgress

if TYPE_CHECKING:
    from training.selfplay import TrainResult


def train_config(home: LeagueHome, stage: str, *, user_file: Path | None = None,
                 overrides: dict[str, Any] | None = None, sets: list[str] | None = None,
                 resume: str | None = None, init_from: str | None = None) -> Config:
    """A self-play run's config, loaded once: configs/ and the stage, the league's own layer, `user_file`, then
    `overrides` (dotted keys; None values are left out) and `sets` ("KEY=VALUE"). The run's budget is not
    config: the command makes it (training.budget.Budget.from_flags) and hands it to the trainer.

    A run that resumes a snapshot (`resume`) or starts from an agent (`init_from`) is what that agent is:
    its network (policy.*, from its checkpoint), the temperature and learning-rate schedule it trained at, and
    (resuming) its teacher, layered under the user's file and flags (agent_layer); a user's key that would
    change the network is refused in one sentence, never dropped."""
    from training.accel import cuda_available  # torch: only when a run is configured

    source = resume or init_from
    layer = agent_layer(home, source, resuming=resume is not None) if source else None
    cfg = load_config(stage=stage, user_file=user_file, home_file=home.config_path,
                      overrides={k: v for k, v in (overrides or {}).items() if v is not None}, sets=sets,
                      gpu=cuda_available, agent_layer=layer, student_of=student_of(home))
    if layer is not None:
        _check_same_network(cfg, layer[1]["policy"], source)
    return cfg


def resumed_stage(home: LeagueHome, resume: str) -> str | None:
    """The stage a run resumed without --stage goes on at: its snapshot's (a 2v2 snapshot went on at the default
    1v1). None for a name that is not a stage's agent (the trainer says what is wrong with it; it also refuses a
    --stage other than the snapshot's)."""
    registry = Registry.open(home.db_path, readonly=True)
    try:
        agent = registry.agent_store.find(resume)
    finally:
        registry.close()
    return stage_of(agent.team_size) if agent is not None and agent.team_size is not None else None


def student_of(home: LeagueHome) -> StudentOf:
    """league.config's `student_of` over this home's members: a new student speaks its teacher's actions (a
    community bot's heads, a league network's space; a scripted teacher's table) and, taught by a community
    bot, reads its own previous controls as the bot does. Nothing for a name that is not a member (the
    trainer says what is wrong with it, in one sentence)."""
    def layer(teacher: str) -> dict[str, Any]:
        from agents.teaching import teacher_space
        from training.opponents import agent_spec

        registry = Registry.open(home.db_path, readonly=True)
        try:
            if teacher not in registry.agent_store.names():
                return {}
            policy = agent_spec(registry, teacher, home.root).policy()
        finally:
            registry.close()
        return {"policy": {"action_space": teacher_space(policy).name, **({"prev_controls": True}
                                                                          if policy.reads_game else {})}}
    return layer


KEPT_PPO = ("temperature", "learning_rate", "lr_schedule")  # how an agent trained: kept by a run from it


def agent_layer(home: LeagueHome, name: str, resuming: bool) -> tuple[str, dict[str, Any]] | None:
    """What agent `name` is, as a config layer (league.config.load_config's agent_layer): its network as its
    checkpoint holds it, and ppo's temperature, learning rate and schedule from the config it trained with;
    resuming, its teacher (training.distill) too, so a distilled student's guide goes on. None for a name
    that is not a trained network: the trainer says what is wrong with it, in one sentence."""
    from agents.checkpoint import read_checkpoint_meta

    registry = Registry.open(home.db_path, readonly=True)
    try:
        agent = registry.agent_store.find(name)
    finally:
        registry.close()
    if agent is None or agent.kind not in ("mlp", "lstm") or not agent.checkpoint_path:
        return None
    meta = read_checkpoint_meta(home.root / agent.checkpoint_path, expected_sha256=agent.checkpoint_sha256)
    trained = agent.config or {}
    ppo = trained.get("ppo") if isinstance(trained.get("ppo"), dict) else {}
    layer: dict[str, Any] = {"policy": dataclasses.asdict(meta.architecture),
                             "ppo": {k: ppo[k] for k in KEPT_PPO if k in ppo}}
    distill = (trained.get("training") or {}).get("distill") if isinstance(trained.get("training"), dict) else None
    if resuming and isinstance(distill, dict) and distill.get("teacher"):
        known = {f.name for f in dataclasses.fields(DistillConfig)}
        layer["training"] = {"distill": {k: v for k, v in distill.items() if k in known}}
    return f"{name}'s checkpoint", layer


def _check_same_network(cfg: Config, network: dict[str, Any], source: str) -> None:
    """One sentence when the user's file or flags would change the network of `source`, which a run keeps."""
    wanted = dataclasses.asdict(cfg.policy)
    for key, value in network.items():
        if wanted.get(key) != value:
            raise ConfigError(f"policy.{key} is {wanted.get(key)!r}, but {source}'s network has {value!r}: a run "
                              f"from an existing network keeps it as it is (leave policy.{key} and --action-space/"
                              "--policy out).")


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
    configs = stage_configs(spec, home, user_file=user_file, overrides=overrides, sets=sets, init_from=init_from)
    registry = Registry.open(home.db_path, configs[0].ratings)
    trainer = CurriculumTrainer(spec, home, registry, configs, source=source, minutes=minutes or 0.0,
                                init_from=init_from, on_event=on_event)
    return trainer.run()


def run_league(home: LeagueHome, file: Path | None, *, name: str | None = None, user_file: Path | None = None,
               minutes: float | None = None, overrides: dict[str, Any] | None = None,
               sets: list[str] | None = None, on_event: OnEvent | None = None):
    """Run (or resume) the league of roles in `file` (default: the shipped configs/league-roles.yaml) and return
    its training.roles.LeagueResult; every role's config is loaded once, before anything is trained."""
    from training.roles import RolesTrainer, role_configs  # torch: only when a league trains
    from training.roles_spec import load_roles

    spec, source = load_roles(file, name=name)
    configs = role_configs(spec, home, user_file=user_file, overrides=overrides, sets=sets)
    registry = Registry.open(home.db_path, configs[spec.main.name].ratings)
    trainer = RolesTrainer(spec, home, registry, configs, source=source, minutes=minutes or 0.0, on_event=on_event)
    return trainer.run()


def run_one(home: LeagueHome, stage: str | None, *, steps: int | None = None, minutes: float | None = None,
            resume: str | None = None, init_from: str | None = None, name: str | None = None,
            user_file: Path | None = None, overrides: dict[str, Any] | None = None, sets: list[str] | None = None,
            progress: Callable[[Budget], tuple[ContextManager, OnProgress]] | None = None) -> TrainResult:
    """One self-play run (`league train --stage S`): its config loaded once (train_config), its budget from the
    flags over the config's, then trained. `progress(budget)` gives the display and its callback, made once the
    budget is known; the trainer is built (names, ownership and checkpoints checked) before the display starts."""
    from training.selfplay import SelfPlayTrainer  # torch: only when a run trains

    if resume is not None and stage is None:
        stage = resumed_stage(home, resume)
    cfg = train_config(home, "1v1" if stage is None else stage, user_file=user_file, overrides=overrides, sets=sets,
                       resume=resume, init_from=init_from)
    budget = Budget.from_flags(steps, minutes, Budget.from_config(cfg.training))  # the run's, handed to it as is
    if budget.unlimited:
        raise LeagueError("Give a budget: --steps N or --minutes M (Ctrl-C also stops and saves).")
    registry = Registry.open(home.db_path, cfg.ratings)
    display, on_progress = progress(budget) if progress is not None else (nullcontext(), None)
    trainer = SelfPlayTrainer(cfg, home, registry, name=name, resume=resume, init_from=init_from,
                              on_progress=on_progress)
    with display:
        return trainer.run(budget)
