"""league gauntlet: one agent against each strong agent, a fixed match each, on real games and SQLite."""

from __future__ import annotations

from typer.testing import CliRunner

from arena.gauntlet import GauntletRow, GauntletVerdict
from league.cli import app
from league.registry import Registry
from league.results import Record

from test_match import GAME_SECONDS, add_network_agent

runner = CliRunner()


def gauntlet_cli(home, *args: str):
    return runner.invoke(app, ["gauntlet", *args, "--home", str(home.root), "--game-seconds", str(GAME_SECONDS),
                               "--workers", "1"])


def test_a_gauntlet_plays_a_recorded_match_per_opponent_and_says_who_beat_it(home):
    result = gauntlet_cli(home, "random", "--against", "rule,atba", "--games", "4", "--seed", "5")
    assert result.exit_code == 0, result.output
    assert "Gauntlet of random: 2 opponents (rule, atba), 4 games each, seed 5" in result.output
    reg = Registry.open(home.db_path)
    matches = {(m.a, m.b): m for m in (reg.match_store.get(i) for i in (1, 2))}
    assert set(matches) == {("random", "rule"), ("random", "atba")}
    assert all(m.status == "finished" and m.stats.games == 4 for m in matches.values())
    assert len(reg.game_store.games()) == 8  # recorded and rated as any match's games
    lost = matches[("random", "rule")]
    assert lost.stats.elo_hi < 0  # the rule bot beats random in every game
    assert "random did not hold" in result.output and "clearly behind rule" in result.output
    # The same command again plays nothing and gives the same verdict.
    again = gauntlet_cli(home, "random", "--against", "rule,atba", "--games", "4", "--seed", "5")
    assert again.exit_code == 0, again.output
    assert "rule (played, match 1)" in again.output.replace("random vs ", "")
    assert len(reg.game_store.games()) == 8
    assert again.output.splitlines()[-1] == result.output.splitlines()[-1]
    reg.close()


def test_by_default_it_meets_the_panel_its_run_would_meet(home):
    reg = Registry.open(home.db_path)
    for name, seed in (("old-v3", 1), ("new-v1", 2)):
        add_network_agent(home, reg, name, seed)
    reg.promotion_store.promote_manually("old-v3")  # the stage's champion: the panel of another run's snapshot holds it
    reg.close()
    result = gauntlet_cli(home, "new-v1", "--games", "2", "--seed", "3")
    assert result.exit_code == 0, result.output
    assert "Gauntlet of new-v1: 1 opponent (old-v3)" in result.output
    assert "new-v1 vs old-v3 (playing, match 1)" in result.output


def test_bad_opponent_lists_get_one_sentence(home):
    for args, sentence in ((["rule", "--against", "rule,random"], "names 'rule' itself"),
                           (["rule", "--against", " , "], "names no agent"),
                           (["rule", "--against", "random,nobody"], "nobody"),
                           (["nobody", "--against", "rule"], "nobody"),
                           (["rule", "--against", "random", "--games", "3"], "even number")):
        result = gauntlet_cli(home, *args)
        assert result.exit_code == 2, (args, result.output)
        assert sentence in result.output, (args, result.output)
        assert "Traceback" not in result.output
    reg = Registry.open(home.db_path)
    assert reg.game_store.games() == []
    reg.close()


def row(opponent: str, wins: int, draws: int, losses: int, lo: float, hi: float) -> GauntletRow:
    return GauntletRow(opponent, 1, Record(wins, draws, losses), (lo + hi) / 2, lo, hi)


def test_the_verdict_tells_a_clear_loss_from_one_within_the_noise():
    held = GauntletVerdict.of("a", [row("b", 100, 0, 100, -40, 40), row("c", 150, 0, 50, 50, 150)])
    assert held.held and held.worst.opponent == "b"
    assert held.text() == "a held: at least half against all 2; worst b 50.0% (level)."
    missed = GauntletVerdict.of("a", [row("b", 95, 0, 105, -57, 22), row("c", 70, 0, 130, -150, -60),
                                      row("d", 120, 0, 80, 10, 140)])
    assert not missed.held and [r.opponent for r in missed.below_half] == ["c", "b"]
    assert missed.text() == ("a did not hold: under half against 2 of 3 (clearly behind c; below half but level "
                             "with b); worst c 35.0% (behind).")
