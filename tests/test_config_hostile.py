"""Hostile config input: every bad value ends in one ConfigError sentence naming its source and key."""

import dataclasses
import math
import os
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest

from league.config import SEED_MAX, Config, load_config
from league.config_tree import INT64_MAX, MAX_CONFIG_BYTES, param, validate
from league.errors import ConfigError
from training.curriculum_spec import parse_curriculum

from conftest import config_from_dict

NAN, INF = float("nan"), float("inf")


def write(tmp_path: Path, data: str | bytes, name: str = "user.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def one_sentence(info: pytest.ExceptionInfo, *fragments: str) -> str:
    message = str(info.value)
    assert "\n" not in message and len(message) < 600, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def leaf_fields(cls: type = Config, prefix: str = ""):
    """(dotted key, type) of every leaf of the config tree."""
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if dataclasses.is_dataclass(tp):
            yield from leaf_fields(tp, f"{prefix}{f.name}.")
        else:
            yield f"{prefix}{f.name}", tp


def nest(dotted: str, value):
    *parents, last = dotted.split(".")
    out = {last: value}
    for part in reversed(parents):
        out = {part: out}
    return out


FLOAT_KEYS = [k for k, tp in leaf_fields() if tp is float]
INT_KEYS = [k for k, tp in leaf_fields() if tp is int or tp == list[int]]


# --------------------------------------------------------------------------- 1. NaN and infinities


@pytest.mark.parametrize("text", ["ppo.gamma=.nan", "ppo.learning_rate=.inf", "game.game_seconds=-.inf",
                                  "ratings.elo.initial=.NaN", "ratings.elo.initial=1e999"])
def test_set_refuses_non_finite_numbers(text):
    with pytest.raises(ConfigError) as info:
        load_config(sets=[text])
    one_sentence(info, f"--set {text}: key '{text.split('=')[0]}' must be a finite number")


def test_home_config_refuses_nan(tmp_path):
    home = write(tmp_path, "ratings:\n  elo:\n    k_factor: .nan\n", "config.yaml")
    with pytest.raises(ConfigError) as info:
        load_config(home_file=home)
    one_sentence(info, str(home), "'ratings.elo.k_factor' must be a finite number between 0 and 400, got nan")


@pytest.mark.parametrize("key, value", [("game.game_seconds", NAN), ("training.minutes", INF),
                                        ("ratings.elo.initial", -INF), ("ratings.elo.initial", 10**400)])
def test_flags_refuse_non_finite_numbers(key, value):
    with pytest.raises(ConfigError) as info:
        load_config(overrides={key: value})
    one_sentence(info, f"the command-line flag for {key!r}: key {key!r} must be a finite number")


@pytest.mark.parametrize("key", FLOAT_KEYS)
def test_every_float_key_refuses_nan_and_inf(key):
    for bad in (NAN, INF, -INF):
        with pytest.raises(ConfigError) as info:
            validate(Config, nest(key, bad), "stored config")
        one_sentence(info, f"stored config: key {key!r} must be a finite number")


def test_stored_config_with_nan_is_refused():
    data = load_config().to_dict()
    data["ppo"]["gamma"] = NAN
    with pytest.raises(ConfigError, match="stored config: key 'ppo.gamma' must be a finite number"):
        config_from_dict(data)


def test_list_of_float_keys_refuse_non_finite_items():
    @dataclass
    class Floats:
        xs: list[float] = param([1.0], "Some numbers.", min=0)

    validate(Floats, {"xs": [0.5, 2]}, "f.yaml")
    for bad in (NAN, INF):
        with pytest.raises(ConfigError) as info:
            validate(Floats, {"xs": [0.5, bad]}, "f.yaml")
        one_sentence(info, "f.yaml: key 'xs' must be a list of finite numbers")


def test_curriculum_gate_refuses_nan():
    data = {"stages": [{"name": "a", "gate": {"min_elo": NAN}}]}
    with pytest.raises(ConfigError) as info:
        parse_curriculum(data, "cur.yaml")
    one_sentence(info, "cur.yaml: key 'stages[0].gate.min_elo' must be a finite number")


# --------------------------------------------------------------------------- 2. files that are not UTF-8


@pytest.mark.parametrize("as_home", [False, True])
def test_file_that_is_not_utf8(tmp_path, as_home):
    path = write(tmp_path, b"\xff\xfe seed: 1")
    with pytest.raises(ConfigError) as info:
        load_config(**{"home_file" if as_home else "user_file": path})
    one_sentence(info, str(path), "UTF-8")


# --------------------------------------------------------------------------- 3. --set that does not parse


@pytest.mark.parametrize("text, fragment", [
    ("ppo.epochs=[1", "not valid YAML"),
    ("seed=!!python/name:os.system", "the YAML tag '!!python/name:os.system' at line 1 is not read by the league"),
    ("seed=" + "[" * 5000, "nested too deeply"),
    ("seed=" + "9" * 5000, "not valid YAML"),
    ("=3", "dotted key"),
    (" =3", "dotted key"),
    ("ppo..epochs=3", "dotted key"),
    ("ppo.epochs.=3", "dotted key"),
    ("ppo.epochs.x=3", "key 'ppo.epochs' must be an integer"),
    ("seed.x=3", "key 'seed' must be an integer"),
])
def test_bad_set_flags_are_one_sentence(text, fragment):
    with pytest.raises(ConfigError) as info:
        load_config(sets=[text])
    one_sentence(info, "--set ", fragment)


# --------------------------------------------------------------------------- 4. integers too big


def test_seed_is_bounded_for_numpy_and_torch():
    with pytest.raises(ConfigError) as info:
        load_config(sets=["seed=99999999999999999999999"])
    one_sentence(info, "--set seed=99999999999999999999999: key 'seed' must be an integer between 0 and "
                       "4294967295, got 99999999999999999999999.")
    assert load_config(sets=[f"seed={SEED_MAX}"]).seed == SEED_MAX == 2**32 - 1
    with pytest.raises(ConfigError, match="between 0 and 4294967295, got 4294967296"):
        load_config(overrides={"seed": 2**32})


@pytest.mark.parametrize("text", [f"training.steps={10**30}", f"training.snapshot_every_steps={10**13}",
                                  f"training.kickstart.steps={10**13}", f"ppo.epochs={2**70}",
                                  f"policy.actor_sizes=[8, {2**64}]"])
def test_huge_integers_are_refused(text):
    with pytest.raises(ConfigError) as info:
        load_config(sets=[text])
    one_sentence(info, f"key '{text.split('=')[0]}' must be", "integer")


@pytest.mark.parametrize("key", INT_KEYS)
def test_every_int_key_fits_in_64_bits(key):
    for bad in (INT64_MAX + 1, -INT64_MAX - 2):
        value = [bad] if key.endswith("_sizes") else bad
        with pytest.raises(ConfigError) as info:
            validate(Config, nest(key, value), "stored config")
        one_sentence(info, f"stored config: key {key!r} must be")


def test_curriculum_step_budgets_are_bounded():
    data = {"stages": [{"name": "a", "max_steps": 10**30}]}
    with pytest.raises(ConfigError) as info:
        parse_curriculum(data, "cur.yaml")
    one_sentence(info, "cur.yaml: key 'stages[0].max_steps' must be an integer between 1 and")


@pytest.mark.parametrize("key, value", [("min_elo", 1e308), ("min_trueskill", -1e9), ("game_seconds", 1e9)])
def test_curriculum_gate_numbers_are_bounded(key, value):
    """Issue 37, item 2: the gate's thresholds and clock had no upper bound."""
    data = {"stages": [{"name": "a", "gate": {key: value}}]}
    with pytest.raises(ConfigError) as info:
        parse_curriculum(data, "cur.yaml")
    one_sentence(info, f"cur.yaml: key 'stages[0].gate.{key}' must be", " between ")


# --------------------------------------------------------------------------- 5. other hostile files


@pytest.mark.parametrize("text, fragment", [
    ("- 1\n- 2\n", "the top level must be a mapping"),
    ("5\n", "the top level must be a mapping"),
    ("stage\n", "the top level must be a mapping"),
    ("1: 2\n", "key 1 must be a string"),
    ("ratings:\n  null: 3\n", "key None in 'ratings' must be a string"),
    ("seed: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    ("seed: " + "9" * 5000 + "\n", "not valid YAML"),
    ("seed: " + "x" * 100_000 + "\n", "key 'seed' must be an integer"),
    # issue 37, item 12: a tag was reported as "not valid YAML at line 1"
    ("ppo:\n  epochs: !!python/object/apply:os.system ['touch pwned']\n",
     "the YAML tag '!!python/object/apply:os.system' at line 2 is not read by the league"),
])
def test_hostile_user_files_are_one_sentence(tmp_path, text, fragment):
    user = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(user_file=user)
    one_sentence(info, str(user), fragment)


def test_hostile_home_file_top_level(tmp_path):
    home = write(tmp_path, "5\n", "config.yaml")
    with pytest.raises(ConfigError) as info:
        load_config(home_file=home)
    one_sentence(info, str(home), "the top level must be a mapping")


def test_file_size_is_bounded(tmp_path):
    user = write(tmp_path, "# padding\n" * (MAX_CONFIG_BYTES // 10 + 1) + "seed: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(user_file=user)
    one_sentence(info, str(user), "more than a config file can be")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_file_is_refused_unread():
    with pytest.raises(ConfigError) as info:
        load_config(user_file=Path("/dev/zero"))
    one_sentence(info, "/dev/zero", "is a device, not a file")


@pytest.mark.timeout(20)
def test_fifo_config_is_refused_at_once(tmp_path):
    """Issue 37, item 3: `--config FIFO` blocked for good in open(); it is refused without being opened for reading."""
    fifo = tmp_path / "config.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as info:
        load_config(user_file=fifo)
    one_sentence(info, str(fifo), "named pipe (FIFO), not a file")


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder"])
def test_home_config_that_is_not_a_file_is_refused(tmp_path, kind):
    """Issue 37, item 8: a home config.yaml that was a FIFO or a symlink to /dev/zero was silently ignored."""
    home_file = tmp_path / "config.yaml"
    if kind == "fifo":
        os.mkfifo(home_file)
    elif kind == "devzero":
        home_file.symlink_to("/dev/zero")
    else:
        home_file.mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(home_file=home_file)
    one_sentence(info, str(home_file), "not a file")


def test_alias_bomb_is_refused(tmp_path):
    """SafeLoader shares aliased nodes, but printing or copying the tree expands them (billion laughs)."""
    lines = ["seed:", "  - &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 10):
        lines.append(f"  - &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    user = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(user_file=user)
    one_sentence(info, str(user), "values")


DUPLICATE = "seed: 1\nppo:\n  epochs: 3\n  gamma: 0.9\n  epochs: 30\n"


@pytest.mark.parametrize("reader", ["config", "home config", "roles", "curriculum", "--set"])
def test_a_key_written_twice_in_one_mapping_is_refused_naming_file_key_and_line(tmp_path, reader):
    """Issue 47, item 15: PyYAML lets the last of two equal keys silently win."""
    from training.curriculum_spec import load_curriculum
    from training.roles_spec import load_roles

    if reader == "--set":
        with pytest.raises(ConfigError) as info:
            load_config(sets=["ppo={epochs: 3, epochs: 30}"])
        one_sentence(info, "--set ppo=", "key 'epochs' is written twice in one mapping (again at line 1)")
        return
    text = {"roles": "name: r\nroles:\n  - {name: main, kind: main}\nname: s\n",
            "curriculum": "name: c\nstages: []\nname: d\n"}.get(reader, DUPLICATE)
    path = write(tmp_path, text)
    load = {"config": lambda: load_config(user_file=path), "home config": lambda: load_config(home_file=path),
            "roles": lambda: load_roles(path), "curriculum": lambda: load_curriculum(path)}[reader]
    line = 4 if reader == "roles" else 3 if reader == "curriculum" else 5
    key = "epochs" if text == DUPLICATE else "name"
    with pytest.raises(ConfigError) as info:
        load()
    one_sentence(info, str(path), f"key {key!r} is written twice in one mapping (again at line {line})")


def test_a_key_in_two_mappings_or_over_a_merged_one_is_not_a_duplicate(tmp_path):
    user = write(tmp_path, "policy:\n  actor_sizes: [8]\nppo: &p {epochs: 3}\n"
                           "training:\n  kickstart: {teacher: rule, steps: 5}\n  steps: 7\n")
    cfg = load_config(user_file=user)
    assert (cfg.policy.actor_sizes, cfg.ppo.epochs, cfg.training.steps) == ([8], 3, 7)
    from league.config_tree import load_yaml

    assert load_yaml("a: &a {x: 1}\nb: {<<: *a, x: 2}\nc: {<<: *a}\n")["b"] == {"x": 2}


def test_small_aliases_still_work(tmp_path):
    user = write(tmp_path, "policy:\n  actor_sizes: &w [64, 64]\n  critic_sizes: *w\n")
    cfg = load_config(user_file=user)
    assert cfg.policy.actor_sizes == cfg.policy.critic_sizes == [64, 64]


def test_long_values_are_shortened_in_messages():
    with pytest.raises(ConfigError) as info:
        load_config(overrides={"policy.activation": "x" * 100_000})
    one_sentence(info, "key 'policy.activation' must be one of 'relu', 'elu', 'tanh', got 'xxx")


def test_finite_values_still_load():
    cfg = load_config(sets=["ratings.elo.initial=-1e4", "ppo.gamma=1", f"training.steps={10**12}"])
    assert math.isfinite(cfg.ratings.elo.initial) and cfg.training.steps == 10**12


# --------------------------------------------------------------------------- 6. every number bounded (issue 37, item 2)


NUMERIC_KEYS = [k for k, tp in leaf_fields() if tp in (int, float) or tp in (list[int], list[float])]


def field_of(dotted: str) -> dataclasses.Field:
    cls = Config
    *parents, last = dotted.split(".")
    for part in parents:
        cls = typing.get_type_hints(cls)[part]
    return {f.name: f for f in dataclasses.fields(cls)}[last]


@pytest.mark.parametrize("key", NUMERIC_KEYS)
def test_every_number_in_the_config_tree_has_a_documented_range(key):
    meta = field_of(key).metadata
    assert meta.get("min") is not None and meta.get("max") is not None, f"{key} needs both min= and max="
    assert meta["min"] < meta["max"]


def just_outside(bound: float, tp, up: bool):
    if tp in (int, list[int]):
        return int(bound) + (1 if up else -1)
    return math.nextafter(float(bound), INF if up else -INF)


@pytest.mark.parametrize("key", NUMERIC_KEYS)
def test_a_value_just_outside_either_bound_is_refused_naming_the_key(key):
    tp = dict(leaf_fields())[key]
    meta = field_of(key).metadata
    for bound, up in ((meta["min"], False), (meta["max"], True)):
        bad = just_outside(bound, tp, up)
        value = [bad] if tp in (list[int], list[float]) else bad
        with pytest.raises(ConfigError) as info:
            validate(Config, nest(key, value), "user.yaml")
        one_sentence(info, f"user.yaml: key {key!r} must be", " between ")
        for ok in (meta["min"], meta["max"]):  # the bounds themselves are inside
            validate(Config, nest(key, [ok] if tp in (list[int], list[float]) else ok), "user.yaml")


@pytest.mark.parametrize("text, fragment", [
    ("ratings.elo.initial=1.0e+308", "'ratings.elo.initial' must be a finite number between -10000 and 10000"),
    ("ratings.elo.initial=150000", "'ratings.elo.initial' must be a finite number between -10000 and 10000"),
    ("ratings.mle.anchor_rating=1e9", "'ratings.mle.anchor_rating' must be a finite number between"),
    ("ratings.trueskill.mu=1e300", "'ratings.trueskill.mu' must be a finite number between"),
    ("ratings.trueskill.sigma=1e200", "'ratings.trueskill.sigma' must be a finite number between"),
    ("ppo.learning_rate=1e300", "'ppo.learning_rate' must be a finite number between"),
    ("ppo.learning_rate=0", "'ppo.learning_rate' must be a finite number between"),
])
def test_the_reported_unbounded_settings_are_refused(text, fragment):
    with pytest.raises(ConfigError) as info:
        load_config(sets=[text])
    one_sentence(info, f"--set {text}", fragment)

