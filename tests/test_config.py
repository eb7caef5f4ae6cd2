from pathlib import Path

import pytest

from league.config import Config, load_config
from league.errors import ConfigError
from league.home import resolve_home

from conftest import config_from_dict


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "user.yaml"
    path.write_text(text)
    return path


def test_defaults_load_for_every_stage():
    for stage, size in (("1v1", 1), ("2v2", 2), ("3v3", 3)):
        cfg = load_config(stage=stage)
        assert cfg.stage == stage and cfg.game.team_size == size
    cfg = load_config()
    assert cfg.ratings.elo.k_factor == 32 and cfg.ratings.mle.anchor_agent == "rule"


def test_user_file_and_flags_override_in_order(tmp_path):
    user = write(tmp_path, "seed: 7\nratings:\n  elo:\n    k_factor: 16\n")
    cfg = load_config(user_file=user)
    assert cfg.seed == 7 and cfg.ratings.elo.k_factor == 16.0
    cfg = load_config(user_file=user, overrides={"seed": 9}, sets=["ratings.elo.k_factor=20"])
    assert cfg.seed == 9 and cfg.ratings.elo.k_factor == 20.0


@pytest.mark.parametrize("text, fragment", [
    ("ratings:\n  elo:\n    k_factr: 16\n", "unknown key 'ratings.elo.k_factr'"),
    ("seed: banana\n", "key 'seed' must be an integer"),
    ("ratings:\n  elo:\n    k_factor: -1\n", "key 'ratings.elo.k_factor' must be a finite number between 0 and 400, got -1"),
    ("game:\n  tick_skip: 0\n", "key 'game.tick_skip' must be an integer between 1 and 120"),
    ("stage: 4v4\n", "Unknown stage '4v4'"),
    ("ratings: 3\n", "ratings must be a mapping"),
    ("seed: [1\n", "not valid YAML at line"),
])
def test_bad_user_files_name_file_key_and_expectation(tmp_path, text, fragment):
    user = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(user_file=user)
    message = str(info.value)
    assert fragment in message
    if "Unknown stage" not in message:
        assert str(user) in message


def test_bad_set_flag_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="--set seed=x: key 'seed' must be an integer"):
        load_config(sets=["seed=x"])
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        load_config(sets=["seed"])
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(user_file=tmp_path / "missing.yaml")


def test_team_size_must_match_stage(tmp_path):
    with pytest.raises(ConfigError, match="needs 1"):
        load_config(user_file=write(tmp_path, "game:\n  team_size: 3\n"))


def test_round_trip_through_dict():
    cfg = load_config(stage="2v2", sets=["seed=5"])
    assert config_from_dict(cfg.to_dict()) == cfg
    assert isinstance(cfg, Config)


def test_home_resolution_order(tmp_path):
    env = {"LEAGUE_HOME": str(tmp_path / "env")}
    assert resolve_home(tmp_path / "flag", env=env).root == tmp_path / "flag"
    assert resolve_home(None, env=env).root == tmp_path / "env"
    assert resolve_home(None, env={}, cwd=tmp_path).root == tmp_path / "league-home"


def test_exponent_floats_without_a_dot_are_numbers(tmp_path):
    """YAML 1.1 reads 5e-4 as a string; files and --set both take it as a number."""
    cfg = load_config(user_file=write(tmp_path, "ppo:\n  learning_rate: 5e-4\n"))
    assert cfg.ppo.learning_rate == pytest.approx(5e-4)
    cfg = load_config(sets=["ppo.learning_rate=2E-4", "ppo.epochs=3"])
    assert cfg.ppo.learning_rate == pytest.approx(2e-4) and cfg.ppo.epochs == 3


def test_the_old_backend_names_work_for_one_release_with_a_one_line_note(capsys):
    """runner.backend's choices say what differs (issue 38, item 2); the old names still work, with a note."""
    import league.config_tree as tree

    tree._NOTED.clear()
    for old, new in (("processes", "rollout"), ("multiprocessing", "central"), ("serial", "in-process")):
        assert load_config("1v1", sets=[f"runner.backend={old}"]).runner.backend == new
    notes = capsys.readouterr().err.strip().splitlines()
    assert len(notes) == 3
    assert notes[0] == ("note: --set runner.backend=processes: runner.backend: 'processes' is now called 'rollout'; "
                        "the old name works until the next release.")
    assert load_config("1v1", sets=["runner.backend=processes"]).runner.backend == "rollout"
    assert capsys.readouterr().err == ""  # once per process
    with pytest.raises(ConfigError, match=r"one of 'auto', 'rollout', 'central', 'in-process', 'ray' \(formerly "
                                          r"'processes', 'multiprocessing', 'serial'\), got 'threads'"):
        load_config("1v1", sets=["runner.backend=threads"])
    stored = load_config("1v1").to_dict()
    stored["runner"]["backend"] = "multiprocessing"  # what an older snapshot holds: read without a note
    assert config_from_dict(stored).runner.backend == "central" and capsys.readouterr().err == ""


def test_a_gpu_learner_gets_configs_gpu_yaml_under_everything_the_user_says():
    gpu, cpu = (lambda: True), (lambda: False)
    def every(cfg) -> int:
        return cfg.training.snapshot_every_steps

    assert every(load_config("1v1")) == 200_000  # commands that do not train never ask
    assert every(load_config("1v1", gpu=cpu)) == 200_000
    assert every(load_config("1v1", gpu=gpu)) == 2_000_000
    assert every(load_config("1v1", sets=["training.device=cuda"], gpu=cpu)) == 2_000_000
    assert every(load_config("1v1", sets=["training.device=cpu"], gpu=gpu)) == 200_000
    assert every(load_config("1v1", sets=["training.snapshot_every_steps=5"], gpu=gpu)) == 5  # the user wins
    assert load_config("1v1", gpu=gpu).ppo.minibatch_size == 2048  # measured: the GPU keeps the CPU's


def test_off_and_on_are_words_not_booleans():
    """`--set training.amp=off` was refused ("must be one of 'auto', 'off', ..., got False"): YAML 1.1 reads off,
    on, yes and no as booleans. Only true and false are booleans now, in files and flags alike."""
    cfg = load_config("1v1", sets=["training.amp=off", "training.compile=off", "training.pin_memory=false"])
    assert (cfg.training.amp, cfg.training.compile, cfg.training.pin_memory) == ("off", "off", False)
    with pytest.raises(ConfigError, match="must be true or false, got 'no'"):
        load_config("1v1", sets=["training.pin_memory=no"])
