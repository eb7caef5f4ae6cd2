"""The curriculum file (configs/curriculum.yaml): typed, validated like every other config.

A curriculum is a name and an ordered list of stages. A stage names its team size (`stage`),
its step budget bounds, how often its promotion gate is checked, the gate itself
(training.gates.GateSpec) and what happens when the gate is still shut once the maximum budget
is spent. Its `config:` mapping is an overlay in the key space of the main config tree
(configs/base.yaml: game, rewards, training.opponents, ppo, ...), validated against that tree
so a bad key is reported with the file and the key. The format is documented in
docs/curriculum.md; what it shares with a league's roles file is read by training.slice_spec.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from league.config import STEPS_MAX, Config, StudentOf, shipped_config_dir, team_size_of
# read_shipped_or (read_yaml): one YAML reader for every config file, with the same error sentences.
from league.config_tree import check_file_name, param, read_shipped_or, section, validate
from league.errors import ConfigError
from training.gates import GateSpec
from training.slice_spec import FileKind, check_overlay, file_name, item_config, parse_items

DEFAULT_FILE = "curriculum.yaml"
# The driver sets these per chunk; in a stage they would be silently overridden.
DRIVER_KEYS = {("stage",), ("training", "steps"), ("training", "minutes")}
FILE = FileKind("curriculum", "stage", "stages", "curriculum")


@dataclass
class StageSpec:
    """One curriculum stage (an item of `stages:`)."""

    name: str = param("", "Stage name, unique in the curriculum; its run's versions are <curriculum>-<name>-vN.")
    stage: Literal["1v1", "2v2", "3v3"] = param("1v1", "Team size the stage trains at.")
    min_steps: int = param(0, "Agent steps the stage trains at least, even once its gate passes.", min=0,
                           max=STEPS_MAX)
    max_steps: int = param(1_000_000, "Agent steps after which the stage ends, gate passed or not.", min=1,
                           max=STEPS_MAX)
    eval_every_steps: int = param(250_000, "Agent steps between gate checks.", min=1, max=STEPS_MAX)
    on_gate_fail: Literal["stop", "advance"] = param(
        "stop", "When max_steps is spent with the gate shut: stop with a report, or advance anyway.")
    gate: GateSpec = section(GateSpec, "The promotion gate.")
    config: dict = param({}, "Overlay on the main config tree for this stage (same keys as configs/base.yaml).")


@dataclass
class CurriculumSpec:
    """A whole curriculum file."""

    name: str = param("curriculum", "Curriculum name; prefixes its stages' run names. --name overrides it.")
    config: dict = param({}, "Overlay on the main config tree applied to every stage (a stage's own wins).")
    stages: list = param([], "The stages, in order (each a mapping, see StageSpec).")

    def run_name(self, index: int) -> str:
        return f"{self.name}-{self.stages[index].name}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _check_overlay(overlay: dict, team_size: int | None, source: str, where: str) -> None:
    check_overlay(overlay, source, where, DRIVER_KEYS, lambda path: "is set by the curriculum; use " + (
        "the stage's 'stage' key." if path == ("stage",) else "the stage's min_steps and max_steps."))
    game = overlay.get("game")
    value = game.get("team_size") if isinstance(game, dict) else None
    if value is not None and team_size is not None and value != team_size:
        raise ConfigError(f"{source}: key '{where}.game.team_size' is {value} but the stage is "
                          f"{team_size}v{team_size}; set the stage's 'stage' key instead.")


def parse_curriculum(data: Any, source: str, name: str | None = None) -> CurriculumSpec:
    """Validate a curriculum mapping (as read from YAML) and build it; `name` overrides its name."""
    validate(CurriculumSpec, data, source)
    data = dict(data)
    spec_name = file_name(data, FILE, source, name)
    _check_overlay(data.get("config", {}), None, source, "config")
    if not data.get("stages"):
        raise ConfigError(f"{source}: key 'stages' must list at least one stage.")
    stages = []
    for i, stage in enumerate(parse_items(StageSpec, data["stages"], FILE, source)):
        where = f"stages[{i}]"
        _check_overlay(stage.config, team_size_of(stage.stage), source, f"{where}.config")
        if stage.min_steps > stage.max_steps:
            raise ConfigError(f"{source}: key '{where}.min_steps' ({stage.min_steps}) is above "
                              f"max_steps ({stage.max_steps}).")
        for key in ("win_rate_vs_rule", "min_elo", "min_trueskill"):
            value = getattr(stage.gate, key)
            if value is not None:
                setattr(stage.gate, key, float(value))
        stages.append(stage)
    spec = CurriculumSpec(name=spec_name, config=data.get("config", {}), stages=stages)
    for i in range(len(stages)):  # each stage's run is named <curriculum>-<stage>
        check_file_name(spec.run_name(i), source if name is None else "the curriculum name", f"stages[{i}] run name")
    return spec


def load_curriculum(path: Path | None = None, name: str | None = None) -> tuple[CurriculumSpec, str]:
    """Read and validate a curriculum file (default: the shipped configs/curriculum.yaml); (spec, source)."""
    data, source = read_shipped_or(path, shipped_config_dir(), DEFAULT_FILE)
    return parse_curriculum(data, source, name), source


def stage_config(spec: CurriculumSpec, index: int, *, user_file: Path | None = None, home_file: Path | None = None,
                 overrides: dict[str, Any] | None = None, sets: list[str] | None = None,
                 student_of: StudentOf | None = None) -> Config:
    """The full config of stage `index`, loaded once per command: the usual layers, then the curriculum's and the
    stage's overlays, then `overrides` (flags) and `--set`s. Each chunk's budget and seed are the driver's."""
    stage = spec.stages[index]
    return item_config(stage.stage, [spec.config, stage.config], user_file=user_file, home_file=home_file,
                       overrides=overrides, sets=sets, student_of=student_of)
