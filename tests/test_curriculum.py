"""The curriculum end to end on tmp league homes: real trainer, real RocketSim games, tiny budgets."""

import copy
import dataclasses
import re

import pytest
import yaml
from typer.testing import CliRunner

from league.cli import app
from league.config import load_config, shipped_config_dir
from league.home import LeagueHome
from league.lineage import line_to, lineage_of
from league.registry import Registry
from training.curriculum import CurriculumTrainer, stage_configs
from training.curriculum_spec import load_curriculum, parse_curriculum, stage_config
from training.progress import StageProgress, UpdateDone

TINY = ["runner.workers=1", "runner.envs_per_worker=2", "runner.backend=in-process", "ppo.steps_per_env=32",
        "ppo.minibatch_size=128", "policy.actor_sizes=[32]", "policy.critic_sizes=[32]",
        "training.snapshot_every_steps=256", "training.eval_every_snapshots=0"]
EASY = {"min_games": 2, "confidence": 3.0, "game_seconds": 5}  # 2 short games; z=3 keeps the bounds wide

FIVE_STAGES = {
    "name": "tiny",
    "stages": [
        {"name": "1v1-dense", "stage": "1v1", "min_steps": 100, "max_steps": 200, "eval_every_steps": 200,
         "gate": {**EASY, "win_rate_vs_rule": 0.0},
         "config": {"game": {"random_start_share": 0.25}, "rewards": {"weights": {"touch": 1.0}}}},
        {"name": "1v1-full", "stage": "1v1", "max_steps": 200, "eval_every_steps": 200,
         "gate": {**EASY, "not_worse_than_previous": True}},
        {"name": "2v2", "stage": "2v2", "max_steps": 200, "eval_every_steps": 200,
         "gate": {**EASY, "win_rate_vs_random": 0.0}},
        # A gate nobody can pass, on a stage that moves on anyway once its budget is spent.
        {"name": "3v3-shaped", "stage": "3v3", "max_steps": 300, "eval_every_steps": 300, "on_gate_fail": "advance",
         "gate": {**EASY, "min_elo": 100000}},
        {"name": "3v3-sparse", "stage": "3v3", "max_steps": 300, "eval_every_steps": 300,
         "gate": {**EASY, "win_rate_vs_rule": 0.0, "not_worse_than_previous": True},
         "config": {"rewards": {"mode": "sparse"}}},
    ],
}
SIZES = [1, 1, 2, 3, 3]


def cli(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def tiny_sets():
    return [a for s in TINY for a in ("--set", s)]


def write(tmp_path, data, name="curriculum.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A league home in which the five-stage tiny curriculum ran to its end through `league train --curriculum`."""
    tmp = tmp_path_factory.mktemp("curriculum")
    home = LeagueHome(tmp / "league")
    assert cli("init", "--home", home.root).exit_code == 0
    result = cli("train", "--curriculum", write(tmp, FIVE_STAGES), "--home", home.root, *tiny_sets())
    assert result.exit_code == 0, result.output
    return home, result.output


def test_the_shipped_curriculum_has_five_valid_stages():
    spec, source = load_curriculum()
    assert source == "configs/curriculum.yaml"
    assert [int(s.stage[0]) for s in spec.stages] == [1, 1, 2, 3, 3]
    assert all(s.min_steps <= s.max_steps and s.gate.plays_rule() for s in spec.stages)
    cfg = load_config(stage="3v3", overrides=spec.stages[-1].config)
    assert cfg.rewards.mode == "sparse"


def test_the_five_stage_curriculum_trains_with_the_settings_it_was_measured_with():
    """The league's defaults moved on (goals restart play; `shot` pays a touch instead of `hit`);
    configs/curriculum.yaml pins what its measurements used, in every stage."""
    spec, _ = load_curriculum(shipped_config_dir() / "curriculum.yaml")
    for index in range(len(spec.stages)):
        cfg = stage_config(spec, index)
        assert cfg.game.goal_ends_episode
        assert (cfg.rewards.weights.hit, cfg.rewards.weights.shot) == (15.0, 0.0)
    default = load_config(stage="1v1").rewards.weights
    assert (default.hit, default.shot) == (0.0, 15.0)


def test_the_hour_curriculum_trains_each_team_size_with_the_defaults_in_one_chunk():
    """configs/curriculum-hour.yaml: 1v1 -> 2v2 -> 3v3, each stage the league's defaults for its
    team size but the team stages' team spirit and opponents (more `rule` games) and the 3v3
    stage's lower learning rate, trained in one chunk so the linear learning rate falls over the
    whole stage."""
    spec, _ = load_curriculum(shipped_config_dir() / "curriculum-hour.yaml")
    assert [s.stage for s in spec.stages] == ["1v1", "2v2", "3v3"]
    for index, stage in enumerate(spec.stages):
        assert stage.eval_every_steps == stage.min_steps == stage.max_steps
        assert stage.on_gate_fail == "advance" and stage.gate.plays_rule()
        cfg, default = stage_config(spec, index), load_config(stage=stage.stage)
        assert cfg.ppo.lr_schedule == "linear"
        if stage.stage == "3v3":
            assert cfg.ppo.learning_rate < default.ppo.learning_rate
        assert (cfg.rewards.team_spirit > 0) == (stage.stage != "1v1")
        mix, default_mix = cfg.training.opponents, default.training.opponents
        assert (mix.rule > default_mix.rule) == (stage.stage != "1v1")
        training = dataclasses.replace(cfg.training, opponents=default_mix)
        assert dataclasses.replace(cfg, ppo=default.ppo, rewards=default.rewards, training=training) == default
        assert dataclasses.replace(cfg.rewards, team_spirit=0.0) == default.rewards


def test_five_stages_run_in_order_and_the_lineage_crosses_them(finished):
    home, output = finished
    assert "Curriculum tiny finished" in output
    # Output that is not a terminal gets progress lines (a bar draws nothing there until it ends).
    assert re.search(r"^1\. \S+ \(1v1\): [\d,]+ steps \(min", output, re.M), output
    reg = Registry.open(home.db_path)
    cur = reg.curriculum_store.get("tiny")
    assert cur.status == "finished"
    assert [s.status for s in cur.stages] == ["passed", "passed", "passed", "advanced", "passed"]
    graph = lineage_of(reg)
    finals = [s.final_agent for s in cur.stages]
    for k, (stage, size) in enumerate(zip(cur.stages, SIZES)):
        versions = reg.agent_store.run_versions(stage.run)
        assert versions and finals[k] == versions[-1]
        assert {reg.agent_store.get(v).team_size for v in versions} == {size}  # in that stage's leaderboards
        first = reg.agent_store.get(versions[0])
        if k == 0:
            assert first.parent_id is None
        else:  # the previous stage's final agent is the parent of the stage's first version
            assert first.parent_id == reg.agent_store.get(finals[k - 1]).id and stage.start_agent == finals[k - 1]
            assert stage.steps == reg.agent_store.get(versions[-1]).steps_trained - reg.agent_store.get(finals[k - 1]).steps_trained
    line = line_to(graph, finals[-1])
    assert line[0] == "tiny-1v1-dense-v1" and [v for v in line if v in finals] == finals
    # Each stage's overlay reached its trainer (stored with every version).
    default = load_config().game.random_start_share
    assert reg.agent_store.get(finals[0]).config["game"]["random_start_share"] == 0.25 != default
    assert reg.agent_store.get(finals[0]).config["rewards"]["weights"]["touch"] == 1.0
    assert reg.agent_store.get(finals[1]).config["game"]["random_start_share"] == default
    assert reg.agent_store.get(finals[4]).config["rewards"]["mode"] == "sparse"


def test_gate_games_are_recorded_as_rated_evaluation_games(finished):
    home, _ = finished
    reg = Registry.open(home.db_path)
    checks = reg.curriculum_store.gate_checks("tiny")
    assert [c.stage_index for c in checks] == [0, 1, 2, 3, 4]
    assert [c.passed for c in checks] == [True, True, True, False, True]
    assert "Elo" in checks[3].criteria[0]["reason"] and not checks[3].criteria[0]["passed"]
    games = reg.game_store.games()
    assert games and {g.origin for g in games} == {"evaluation"}
    for check, size in zip(checks, SIZES):
        mine = [g for g in games if check.agent in (g.blue, g.orange)]
        assert mine and {g.team_size for g in mine} == {size}
        assert reg.game_store.rating(check.agent, size).games == len(mine)
    # "not worse than previous": the 1v1-full agent met the 1v1-dense final agent.
    assert any({g.blue, g.orange} == {checks[1].agent, checks[0].agent} for g in games)
    # The 2v2 gate asks for a win rate against random: its games were against random only.
    assert {g.blue if g.orange == checks[2].agent else g.orange
            for g in games if checks[2].agent in (g.blue, g.orange)} == {"random"}
    assert checks[2].criteria[0]["name"] == "win_rate_vs_random"


def test_status_shows_stages_gates_and_history(finished):
    home, _ = finished
    result = cli("curriculum", "status", "--home", home.root)
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "Curriculum tiny" in text and "finished" in text
    for name in ("1v1-dense", "1v1-full", "2v2", "3v3-shaped", "3v3-sparse", "advanced", "min_elo=100000"):
        assert name in text, name
    assert "Gate checks" in text and "Elo" in text
    assert cli("curriculum", "status", "nope", "--home", home.root).exit_code == 2


def test_running_a_finished_curriculum_again_trains_nothing(finished, tmp_path):
    home, _ = finished
    reg = Registry.open(home.db_path)
    before = len(reg.agent_store.names())
    result = cli("train", "--curriculum", write(tmp_path, FIVE_STAGES), "--home", home.root, *tiny_sets())
    assert result.exit_code == 0 and "finished" in result.output
    assert len(Registry.open(home.db_path).agent_store.names()) == before


def test_train_one_stage_from_an_earlier_agent(finished):
    home, _ = finished
    result = cli("train", "--stage", "2v2", "--from", "tiny-1v1-full-v1", "--steps", "150", "--name", "jump",
                 "--home", home.root, *tiny_sets())
    assert result.exit_code == 0, result.output
    assert re.search(r"^training: [\d,]+ steps, [\d,]+ steps/s", result.output, re.M), result.output
    reg = Registry.open(home.db_path)
    first, source = reg.agent_store.get("jump-v1"), reg.agent_store.get("tiny-1v1-full-v1")
    assert first.team_size == 2 and first.parent_id == source.id
    assert source.steps_trained + 150 <= first.steps_trained < source.steps_trained + 150 + 8
    bad = cli("train", "--stage", "2v2", "--from", "rule", "--steps", "150", "--home", home.root)
    assert bad.exit_code == 2 and "trained agent" in bad.output
    both = cli("train", "--from", "jump-v1", "--resume", "jump-v1", "--steps", "10", "--home", home.root)
    assert both.exit_code == 2 and "not both" in both.output


def test_resume_in_the_middle_of_a_stage(home):
    spec = parse_curriculum({"name": "cut", "stages": [
        {"name": "a", "stage": "1v1", "max_steps": 150, "eval_every_steps": 150, "gate": EASY},
        {"name": "b", "stage": "2v2", "min_steps": 600, "max_steps": 600, "eval_every_steps": 300,
         "gate": {**EASY, "win_rate_vs_rule": 0.0}},
    ]}, "test")
    reg = Registry.open(home.db_path)

    def ctrl_c_in_stage_b(event):
        if isinstance(event, StageProgress) and isinstance(event.event, UpdateDone) and event.index == 1:
            raise KeyboardInterrupt  # as if Ctrl-C arrived in the middle of the stage's first chunk

    first = CurriculumTrainer(spec, home, reg, stage_configs(spec, home, sets=TINY), on_event=ctrl_c_in_stage_b).run()
    assert first.status == "interrupted" and "run the same command again" in first.message
    cur = reg.curriculum_store.get("cut")
    assert cur.status == "interrupted" and cur.stage_index == 1
    assert [s.status for s in cur.stages] == ["passed", "training"]
    (cut,) = reg.agent_store.run_versions("cut-b")  # the snapshot saved on Ctrl-C
    start = reg.agent_store.get("cut-a-v1").steps_trained
    interrupted_at = reg.agent_store.get(cut).steps_trained - start
    assert 0 < interrupted_at < 300 and cur.stages[1].steps == interrupted_at
    a_checks = len(reg.curriculum_store.gate_checks("cut", 0))

    second = CurriculumTrainer(spec, home, reg, stage_configs(spec, home, sets=TINY)).run()
    assert second.status == "finished"
    versions = reg.agent_store.run_versions("cut-b")
    assert versions[0] == cut and reg.agent_store.get(versions[1]).parent_id == reg.agent_store.get(cut).id
    steps = [reg.agent_store.get(v).steps_trained for v in versions]
    assert steps == sorted(steps) and 600 <= steps[-1] - start < 600 + 16
    assert reg.agent_store.run_versions("cut-a") == ["cut-a-v1"] and len(reg.curriculum_store.gate_checks("cut", 0)) == a_checks
    assert [c.steps // 300 for c in reg.curriculum_store.gate_checks("cut", 1)] == [1, 2]  # one check per 300 steps


@pytest.mark.parametrize("change, words", [
    (lambda d: d["stages"][0]["config"]["game"].update(team_sise=1), ["stages[0].config.game.team_sise"]),
    (lambda d: d["stages"][1].update(on_gate_fail="retry"), ["stages[1].on_gate_fail", "'stop', 'advance'"]),
    (lambda d: d["stages"][2].update(min_steps=500), ["stages[2].min_steps", "max_steps"]),
    (lambda d: d["stages"][2]["gate"].update(win_rate_vs_rule=1.5), ["stages[2].gate.win_rate_vs_rule"]),
    (lambda d: d["stages"][2].update(config={"game": {"team_size": 3}}), ["stages[2].config.game.team_size", "2v2"]),
    (lambda d: d["stages"][3].update(config={"training": {"steps": 5}}), ["stages[3].config.training.steps"]),
    (lambda d: d["stages"][4].update(name="2v2"), ["stages[4].name", "repeats"]),
])
def test_a_bad_curriculum_file_is_one_sentence_and_exit_2(home, tmp_path, change, words):
    data = copy.deepcopy(FIVE_STAGES)
    change(data)
    path = write(tmp_path, data, "bad.yaml")
    result = cli("train", "--curriculum", path, "--home", home.root)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert text.startswith("Error:") and str(path) in text and all(w in text for w in words), text
    assert text.endswith(".") and text.count(". ") == 0  # one sentence


def test_cli_refusals(home, tmp_path):
    assert "No curriculum has run" in cli("curriculum", "status", "--home", home.root).output
    missing = cli("train", "--curriculum", tmp_path / "missing.yaml", "--home", home.root)
    assert missing.exit_code == 2 and "does not exist" in missing.output
    with_steps = cli("train", "--curriculum", "--steps", "10", "--home", home.root)
    assert with_steps.exit_code == 2 and "--steps does not go with --curriculum" in " ".join(with_steps.output.split())
    stray = cli("train", "extra.yaml", "--steps", "10", "--home", home.root)
    assert stray.exit_code == 2 and "only for --curriculum" in " ".join(stray.output.split())


def test_a_resumed_curriculum_must_keep_its_stages(registry):
    stages = [("a", 1, "c-a"), ("b", 2, "c-b")]
    registry.curriculum_store.start("c", {"stages": []}, "one.yaml", stages)
    again = registry.curriculum_store.start("c", {"stages": [], "changed": True}, "two.yaml", stages)  # budgets may change
    assert again.source == "two.yaml" and again.spec["changed"] and len(again.stages) == 2
    with pytest.raises(Exception, match="was started with the stages a, b"):
        registry.curriculum_store.start("c", {}, "three.yaml", [("a", 1, "c-a"), ("z", 3, "c-z")])
