"""The `league` command through Typer's test runner, on real league homes."""

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from league.cli import app
from league.registry import Registry

from conftest import play

runner = CliRunner()


def run(*args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


@pytest.fixture
def league_home(tmp_path):
    home = tmp_path / "lh"
    result = run("init", "--home", home)
    assert result.exit_code == 0, result.output
    return home


def test_init_creates_home_and_is_repeatable(tmp_path):
    home = tmp_path / "h"
    result = run("init", "--home", home)
    assert result.exit_code == 0 and "Created league" in result.output
    assert (home / "league.db").is_file() and (home / "checkpoints").is_dir() and (home / "replays").is_dir()
    again = run("init", "--home", home)
    assert again.exit_code == 0 and "Already initialised" in again.output


def test_home_from_environment(tmp_path):
    home = tmp_path / "env-home"
    assert run("init", env={"LEAGUE_HOME": str(home)}).exit_code == 0
    result = run("agents", env={"LEAGUE_HOME": str(home)})
    assert result.exit_code == 0 and "rule" in result.output and "random" in result.output


def test_agents_stage_and_all(league_home):
    reg = Registry.open(league_home / "league.db")
    reg.agent_store.add("one", "mlp", 1)
    reg.agent_store.add("two", "mlp", 2)
    reg.agent_store.add("old", "mlp", 1)
    reg.agent_store.set_status("old", "retired")
    out = run("agents", "--home", league_home).output
    assert "one" in out and "two" in out and "old" not in out
    out = run("agents", "--home", league_home, "--stage", "2v2").output
    assert "two" in out and "one" not in out and "rule" in out
    assert "old" in run("agents", "--home", league_home, "--all").output


def test_show_promote_retire_reactivate(league_home):
    reg = Registry.open(league_home / "league.db")
    reg.agent_store.add("v1", "mlp", 1)
    reg.agent_store.add("v2", "mlp", 1, parent="v1")
    play(reg, "v1", "rule", 2, 0)
    out = run("show", "v1", "--home", league_home).output
    assert "v2" in out and "1v1" in out and "1" in out
    assert run("promote", "v1", "--home", league_home).output.strip() == "v1 is now champion"
    assert run("promote", "v2", "--home", league_home).exit_code == 0
    assert reg.agent_store.get("v1").status == "active" and reg.agent_store.get("v2").status == "champion"
    assert run("retire", "v1", "--home", league_home).output.strip() == "v1 is now retired"
    assert run("reactivate", "v1", "--home", league_home).output.strip() == "v1 is now active"


def test_leaderboard_orders(league_home):
    reg = Registry.open(league_home / "league.db")
    reg.agent_store.add("strong", "mlp", 1)
    for _ in range(5):
        play(reg, "strong", "rule", 3, 0)
        play(reg, "rule", "random", 2, 0)
    for by in ("elo", "trueskill", "mle"):
        result = run("leaderboard", "--home", league_home, "--by", by)
        assert result.exit_code == 0, result.output
        lines = [l for l in result.output.splitlines() if "│" in l]
        order = [l.split("│")[2].strip() for l in lines]
        played = [name for name in order if name in ("strong", "rule", "random")]  # unplayed baselines sit at 1500
        assert played == ["strong", "rule", "random"], (by, order)


def _mle_column(output: str) -> dict[str, tuple[float, str]]:
    """agent -> (mle, 95% CI) of a printed leaderboard."""
    cells = [[c.strip() for c in l.split("│")] for l in output.splitlines() if "│" in l]
    return {c[2]: (float(c[5]), c[6]) for c in cells}


@pytest.fixture(scope="module")
def necto_league(tmp_path_factory):
    """A league where the community bot `necto` and the baselines have played each other in 1v1; made once
    for the module, so only read-only commands may use it."""
    league_home = tmp_path_factory.mktemp("necto") / "lh"
    assert run("init", "--home", league_home).exit_code == 0
    reg = Registry.open(league_home / "league.db")
    reg.agent_store.add("necto", "community", 1)
    reg.agent_store.add("fresh", "mlp", 1)
    for _ in range(3):
        play(reg, "necto", "rule", 3, 1)
        play(reg, "rule", "random", 2, 0)
        play(reg, "random", "necto", 1, 1)
    play(reg, "rule", "necto", 2, 1)
    play(reg, "fresh", "fresh", 1, 0)  # a mirror match: not a rated game
    reg.close()
    return league_home


def test_leaderboard_anchor_pins_the_mle_on_any_agent(necto_league):
    plain = run("leaderboard", "--home", necto_league, "--by", "mle")
    assert plain.exit_code == 0 and "MLE anchored: rule = 1500" in plain.output
    before = _mle_column(plain.output)
    assert before["rule"] == (1500.0, "1500..1500")
    for flag, value in (("necto", 1500.0), ("necto=2000", 2000.0)):
        result = run("leaderboard", "--home", necto_league, "--by", "mle", "--anchor", flag)
        assert result.exit_code == 0, result.output
        assert f"MLE anchored: necto = {value:g}" in result.output
        after = _mle_column(result.output)
        assert after["necto"] == (value, f"{value:.0f}..{value:.0f}")  # the anchor's interval has zero width
        shift = value - before["necto"][0]
        for name in ("rule", "random"):  # one constant for everyone (the table rounds to whole points)
            assert abs(after[name][0] - (before[name][0] + shift)) <= 1
            lo, hi = map(float, after[name][1].split(".."))
            assert lo < after[name][0] < hi
        assert after["fresh"][1] == "-"
    same = run("leaderboard", "--home", necto_league, "--by", "mle", "--anchor", "rule")
    assert _mle_column(same.output) == before and "MLE anchored: rule = 1500" in same.output


def test_leaderboard_anchor_default_elo_comes_from_the_league_config(tmp_path):
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("ratings:\n  mle:\n    anchor_rating: 1000\n")
    home = tmp_path / "h"
    assert run("init", "--home", home, "--config", cfg).exit_code == 0
    reg = Registry.open(home / "league.db")
    reg.agent_store.add("necto", "community", 1)
    play(reg, "necto", "rule", 1, 0)
    reg.close()
    assert "MLE anchored: rule = 1000" in run("leaderboard", "--home", home).output
    result = run("leaderboard", "--home", home, "--anchor", "necto")
    assert "MLE anchored: necto = 1000" in result.output and _mle_column(result.output)["necto"][0] == 1000


@pytest.mark.parametrize("anchor, message", [
    ("nobody", "No agent named 'nobody'"),
    ("necto2", "No agent named 'necto2'; did you mean 'necto'"),
    ("fresh", "cannot be anchored on 'fresh': it has no rated games in 1v1"),
    ("atba", "it has no rated games in 1v1"),
    ("necto=abc", "The MLE anchor 'necto=abc' has no number after '='"),
    ("=1500", "The MLE anchor '=1500' names no agent"),
    ("necto=6000", "not a number from 0 to 5000"),
    ("necto=-5", "not a number from 0 to 5000"),
    ("necto=nan", "not a number from 0 to 5000"),
    ("necto=inf", "not a number from 0 to 5000"),
])
def test_leaderboard_anchor_refusals_are_one_sentence_and_exit_2(necto_league, anchor, message):
    result = run("leaderboard", "--home", necto_league, "--anchor", anchor)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert message in text and "Traceback" not in text and len(result.output.strip().splitlines()) == 1


def test_leaderboard_anchor_needs_games_in_the_asked_stage(necto_league):
    result = run("leaderboard", "--home", necto_league, "--stage", "2v2", "--anchor", "rule")
    assert result.exit_code == 2 and "no rated games in 2v2" in " ".join(result.output.split())


def test_lineage_shows_line_and_descendants(league_home):
    reg = Registry.open(league_home / "league.db")
    reg.agent_store.add("v1", "mlp", 1)
    reg.agent_store.add("v2", "mlp", 1, parent="v1")
    reg.agent_store.add("v3", "mlp", 1, parent="v2")
    out = run("lineage", "v2", "--home", league_home).output
    assert out.index("v1") < out.index("v2") < out.index("v3") and "←" in out


@pytest.mark.parametrize("args, message", [
    (["show", "rulez"], "No agent named 'rulez'; did you mean 'rule'"),
    (["promote", "rndom"], "did you mean 'random'"),
    (["retire", "nobody"], "No agent named 'nobody'"),
    (["reactivate", "nobody"], "No agent named 'nobody'"),
    (["lineage", "nobody"], "No agent named 'nobody'"),
    (["promote", "rule"], "baseline"),
    (["agents", "--stage", "4v4"], "Unknown stage '4v4'"),
    (["leaderboard", "--by", "glicko"], "Unknown ranking 'glicko'"),
])
def test_error_paths_exit_2_with_one_sentence(league_home, args, message):
    result = run(*args, "--home", league_home)
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert message in text and "Traceback" not in text


@pytest.mark.parametrize("command", ["agents", "show rule", "promote x", "retire x", "reactivate x",
                                     "leaderboard", "lineage x", "gauntlet x"])
def test_missing_home_says_how_to_create_it(tmp_path, command):
    result = run(*command.split(), "--home", tmp_path / "nowhere")
    assert result.exit_code == 2
    assert "league init --home" in " ".join(result.output.split())


def test_bad_config_file_is_one_sentence(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ratings:\n  elo:\n    k_factor: fast\n")
    result = run("init", "--home", tmp_path / "h", "--config", bad)
    assert result.exit_code == 2 and "ratings.elo.k_factor" in " ".join(result.output.split())


def test_usage_error_exits_2():
    assert run("show").exit_code == 2
    assert run("no-such-command").exit_code == 2


def _all_commands(group: typer.Typer, prefix=()):
    for info in group.registered_commands:
        yield prefix + (info.name or info.callback.__name__.replace("_", "-"),), info.callback
    for sub in group.registered_groups:
        yield from _all_commands(sub.typer_instance, prefix + (sub.name,))


def test_every_command_help_has_an_example():
    commands = list(_all_commands(app))
    assert len(commands) >= 8
    for path, callback in commands:
        result = run(*path, "--help")
        assert result.exit_code == 0
        assert "Example: league " in (callback.__doc__ or ""), path
        assert "Example: league" in result.output, path


def test_agents_command_does_not_import_heavy_packages(league_home):
    code = ("import sys; from league.cli import app; from typer.testing import CliRunner; "
            f"r = CliRunner().invoke(app, ['agents', '--home', r'{league_home}']); assert r.exit_code == 0; "
            "print(sorted(m for m in ('torch', 'rlgym', 'RocketSim', 'streamlit') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_init_config_becomes_the_league_config_layer(tmp_path):
    cfg = tmp_path / "mine.yaml"
    cfg.write_text("ratings:\n  elo:\n    k_factor: 10\n  mle:\n    anchor_rating: 1000\n")
    home = tmp_path / "h"
    assert run("init", "--home", home, "--config", cfg).exit_code == 0
    assert (home / "config.yaml").read_text() == cfg.read_text()
    reg = Registry.open(home / "league.db")
    reg.agent_store.add("a", "mlp", 1)
    play(reg, "a", "random", 1, 0)
    out = run("leaderboard", "--home", home, "--by", "mle").output
    assert "1000" in out  # the anchor rating from the league's config
    bad = tmp_path / "stage.yaml"
    bad.write_text("stage: 2v2\n")
    result = run("init", "--home", tmp_path / "h2", "--config", bad)
    assert result.exit_code == 2 and "cannot be set in a league home" in " ".join(result.output.split())
    assert not (tmp_path / "h2").exists()  # nothing written for a refused config
