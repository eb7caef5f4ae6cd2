"""The title round robin (arena/crown.py, `league crown`): real games of scripted stage agents whose order is known
(rule sweeps random and atba), and recorded tournaments whose payoffs are set, so a rule that crowns a weaker
agent, or an agent another one beats, fails."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena.crown import (TITLE_NAME, crown, open_title_round_robin, play_title_round_robin, playoff_entrants,
                         title_table)
from league.cli import app
from league.cli.train import champion_line
from league.config import load_config
from league.errors import LeagueError
from league.results import Record

from conftest import round_robin

GAME_SECONDS = 8


def test_the_title_goes_to_the_agent_that_loses_least_to_anyone_in_real_games(scripted_stage):
    """The champion is the random bot. A round robin of it, rulebot, an atba bot and the rule baseline: rulebot
    loses least to anyone and takes the title (the rule baseline may play, not hold it); crowned again on the same
    games, nothing changes; with rulebot the title holder, the weaker agents never take it."""
    home, reg = scripted_stage
    reg.agent_store.add("atbabot", "atba", 1)
    reg.promotion_store.promote_manually("randbot")
    cfg = load_config(stage="1v1", sets=[f"game.game_seconds={GAME_SECONDS}", "runner.workers=1"])
    tid = open_title_round_robin(reg, cfg, ["randbot", "atbabot", "rulebot", "rule"], games_per_pair=8, seed=5)
    play_title_round_robin(reg, home, cfg, tid, workers=1)
    assert reg.tournament_store.get(tid).status == "finished" and len(reg.game_store.games(tournament_id=tid)) == 48
    crowning = crown(reg, tid)
    table = {e.name: e for e in crowning.entrants}
    assert crowning.pick == "rulebot" and crowning.holder == "rulebot" and not table["rule"].eligible
    assert table["rulebot"].worst > max(table[n].worst for n in ("randbot", "atbabot")), crowning.entrants
    p = crowning.promotion
    assert (p.method, p.tournament_id, p.previous_champion, p.promoted) == ("round-robin", tid, "randbot", True)
    assert reg.agent_store.champion(1).name == "rulebot" and reg.promotion_store.for_stage(1)[-1] == p
    again = crown(reg, tid)
    assert again.promotion is None and again.holder == "rulebot" and len(reg.promotion_store.all()) == 2
    assert again.summary().startswith(f"The title stays with rulebot after round robin {tid}: worst matchup ")


def test_a_champion_that_loses_least_keeps_the_title_and_ties_go_to_it(scripted_stage):
    """`b` beats the champion `a` head to head, but loses badly to `c`; `a` loses to nobody by as much: `a` stays.
    Then `b` and `a` tie on worst matchup and on score: the holder keeps it."""
    home, reg = scripted_stage
    for name in ("a", "b", "c"):
        reg.agent_store.add(name, "mlp", 1)
    reg.promotion_store.promote_manually("a")
    tid = round_robin(reg, ["a", "b", "c"], {("b", "a"): (6, 0, 4), ("c", "b"): (9, 0, 1), ("a", "c"): (7, 0, 3)})
    crowning = crown(reg, tid)
    assert [e.name for e in crowning.entrants] == ["a", "c", "b"] and crowning.promotion is None
    assert (crowning.entrant("a").worst, crowning.entrant("a").worst_against) == (0.4, "b")
    tie = round_robin(reg, ["a", "b"], {("a", "b"): (5, 0, 5)})
    assert crown(reg, tie).promotion is None and reg.agent_store.champion(1).name == "a"


def test_a_round_robin_that_says_nothing_of_the_title_is_one_sentence(scripted_stage):
    """Unfinished, without the title holder, a pair that never met, or mixed teams: one sentence, exit 2, the
    title where it was."""
    home, reg = scripted_stage
    reg.agent_store.add("x", "mlp", 1)
    reg.promotion_store.promote_manually("randbot")
    runner = CliRunner()

    def refused(tid: int, says: str) -> None:
        result = runner.invoke(app, ["crown", "--tournament", str(tid), "--home", str(home.root)])
        assert result.exit_code == 2 and says in result.output, result.output
        assert len(result.output.strip().splitlines()) <= 3  # one sentence (rich may wrap it)
        assert reg.agent_store.champion(1).name == "randbot"

    without = round_robin(reg, ["rulebot", "x"], {("rulebot", "x"): (2, 0, 0)})
    refused(without, "does not hold the 1v1 champion randbot")
    unmet = round_robin(reg, ["rulebot", "x", "randbot"], {("rulebot", "x"): (2, 0, 0), ("x", "randbot"): (2, 0, 0)})
    refused(unmet, "never met")
    running = reg.tournament_store.create("t", 1, 0, 2, 2, ["rulebot", "randbot"], {})
    refused(running, "is running: a title is decided from a finished round robin")
    refused(999, "No tournament with id 999")
    with pytest.raises(LeagueError, match="mixed teams"):
        title_table(reg, round_robin(reg, ["rulebot+x", "randbot+x"], {}))


def test_league_crown_prints_the_table_and_crowns(scripted_stage):
    home, reg = scripted_stage
    for name in ("a", "b"):
        reg.agent_store.add(name, "mlp", 1)
    reg.promotion_store.promote_manually("a")
    tid = round_robin(reg, ["a", "b", "rule"], {("b", "a"): (6, 2, 2), ("b", "rule"): (8, 0, 2), ("a", "rule"): (9, 0, 1)})
    result = CliRunner().invoke(app, ["crown", "--tournament", str(tid), "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    assert f"Round robin {tid} crowned b, from a: worst matchup 70% (against a), 75% over 20 games." in result.output
    assert "rule (cannot hold the title)" in result.output and reg.agent_store.champion(1).name == "b"
    assert champion_line(home, "b", "zz") == (f"Champion: b; crowned by round robin {tid} of 3: its worst matchup "
                                              "a 70% over 10")
    shown = CliRunner().invoke(app, ["show", "b", "--home", str(home.root)])
    assert f"Title round robin {tid}: crowned, from a" in shown.output and "6-2-2" in shown.output, shown.output


def test_contenders_near_the_top_play_a_playoff_that_only_they_can_win(scripted_stage):
    """Run si's case: two entrants' worst matchups lie close (`a` 45% against `c`, `b` 40% against `d`), and the
    tie-break decides on noise. They contend in a playoff with each one's two worst opponents; there `d` loses
    least to anyone but never contended (its worst matchup of the round robin was 20%), so the title goes to
    the contender `b`, and `league crown`, `league show` and the champion line name the playoff. Fails before
    the playoff: no such entrants, and the playoff's table would crown `d`. The playoff's table counts its entrants'
    games of the round robin too (the next test)."""
    from league.stores.tournaments import TITLE_PLAYOFF_KEY

    home, reg = scripted_stage
    for name in ("a", "b", "c", "d"):
        reg.agent_store.add(name, "mlp", 1)
    reg.promotion_store.promote_manually("a")
    first = round_robin(reg, ["a", "b", "c", "d"], {("a", "b"): (5, 0, 5), ("c", "a"): (11, 0, 9), ("a", "d"): (8, 0, 2),
                                                    ("b", "c"): (7, 0, 3), ("d", "b"): (6, 0, 4), ("d", "c"): (9, 0, 1)})
    crowning = crown(reg, first)
    assert crowning.promotion is None and crowning.contenders(0.1, 3) == ["a", "b"]
    assert playoff_entrants(crowning, 0.04, 3) is None  # b is 5 points behind: no playoff
    assert playoff_entrants(crowning, 1, 1) is None  # one contender at most: no playoff
    assert playoff_entrants(crowning, 1, 3)[0] == ["a", "b", "d"]  # the best three within reach, best first
    contenders, entrants = playoff_entrants(crowning, 0.1, 3)
    assert (contenders, entrants) == (["a", "b"], ["a", "b", "c", "d"])
    playoff = round_robin(reg, entrants, {("b", "a"): (12, 0, 8), ("a", "c"): (12, 0, 8), ("d", "a"): (14, 0, 6),
                                          ("b", "c"): (14, 0, 6), ("d", "b"): (10, 0, 10), ("d", "c"): (18, 0, 2)},
                          config={TITLE_PLAYOFF_KEY: {"of": first, "contenders": contenders}})
    result = CliRunner().invoke(app, ["crown", "--tournament", str(playoff), "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    assert "d (cannot hold the title)" in result.output and reg.agent_store.champion(1).name == "b"
    assert (f"Round robin {playoff} (the playoff of round robin {first}) crowned b, from a: worst matchup 47% "
            "(against d)") in " ".join(result.output.split())  # 14 of 30: its games of both round robins
    assert title_table(reg, playoff)[0].name == "d" and reg.promotion_store.for_stage(1)[-1].tournament_id == playoff
    assert champion_line(home, "b", "zz").startswith(f"Champion: b; crowned by round robin {playoff} (the playoff of "
                                                     f"round robin {first}) of 4: its worst matchup d 47% over 30")
    shown = CliRunner().invoke(app, ["show", "b", "--home", str(home.root)])
    assert f"Title round robin {playoff} (the playoff of round robin {first}): crowned, from a" in " ".join(
        shown.output.split()), shown.output


def test_a_playoff_decides_on_its_games_and_its_entrants_games_of_the_round_robin(scripted_stage):
    """Run wa's case: the round robin crowns `x` (worst matchup 55%) over `y` (45%); the playoff's 10 games a pair
    alone would give `y` the title (50% against x's 40%), on a fifth of the games. Counted with the round robin's
    games between the playoff's entrants, x's worst matchup is 50% and y's 47%: x keeps the title, and `league show`
    prints the records the playoff decided on. Fails before: the playoff's games alone crowned y, as run wa's
    playoff crowned wa-v108, which the round robin's pick wa-v164 beats by 69 Elo on fresh seeds."""
    from arena.crown import title_kept
    from league.stores.tournaments import TITLE_PLAYOFF_KEY

    home, reg = scripted_stage
    for name in ("x", "y", "z"):
        reg.agent_store.add(name, "mlp", 1)
    first = round_robin(reg, ["x", "y", "z"], {("x", "y"): (11, 0, 9), ("x", "z"): (11, 0, 9), ("y", "z"): (12, 0, 8)})
    crowning = crown(reg, first)
    assert crowning.holder == "x" and playoff_entrants(crowning, 0.1, 3) == (["x", "y"], ["x", "y", "z"])
    playoff = round_robin(reg, ["x", "y", "z"], {("x", "y"): (5, 0, 5), ("x", "z"): (4, 0, 6), ("y", "z"): (5, 0, 5)},
                          config={TITLE_PLAYOFF_KEY: {"of": first, "contenders": ["x", "y"]}})
    decided = crown(reg, playoff)
    assert decided.promotion is None and reg.agent_store.champion(1).name == "x", decided.entrants
    x, y = decided.entrant("x"), decided.entrant("y")
    assert (x.records["y"], x.records["z"], x.games) == (Record(16, 0, 14), Record(15, 0, 15), 60)
    assert (x.worst, round(y.worst, 3), y.worst_against) == (0.5, 0.467, "x")
    assert decided.summary() == (f"The title stays with x after round robin {playoff} (the playoff of round robin "
                                 f"{first}): worst matchup 50% (against z), 52% over 60 games.")
    assert title_kept(reg, "x", 1, crowned_in=first).records == {"y": Record(16, 0, 14), "z": Record(15, 0, 15)}


def test_a_playoff_of_a_playoff_plays_on_from_the_whole_chain(scripted_stage):
    """`league crown --tournament P --playoff` after a finished playoff P plays a playoff of P: it decides on its
    games, P's and the round robin's, between its entrants. Here x keeps the title over the chain's 64 games a
    contender (worst matchup 50% against y's 47%); P's and its own 24 games alone would crown y. Fails before: the
    second playoff read P's games and its own, not the round robin's (after run wd's 400-game playoff, a 2-game one
    read 1,608 games a contender where the chain holds 1,768). A crowned round robin's error
    names the command that plays on."""
    from league.stores.tournaments import TITLE_PLAYOFF_KEY

    home, reg = scripted_stage
    for name in ("x", "y", "z"):
        reg.agent_store.add(name, "mlp", 1)
    results = {("x", "y"): (11, 0, 9), ("x", "z"): (11, 0, 9), ("y", "z"): (12, 0, 8)}
    first = round_robin(reg, ["x", "y", "z"], results)
    crown(reg, first)
    playoff = round_robin(reg, ["x", "y", "z"], {("x", "y"): (5, 0, 5), ("x", "z"): (4, 0, 6), ("y", "z"): (5, 0, 5)},
                          config={TITLE_PLAYOFF_KEY: {"of": first, "contenders": ["x", "y"]}})
    assert crown(reg, playoff).holder == "x"
    with pytest.raises(LeagueError, match=f"to play on: `league crown --tournament {playoff} --playoff --games N`"):
        crown(reg, first)
    again = round_robin(reg, ["x", "y", "z"], {("x", "y"): (1, 0, 1), ("x", "z"): (1, 0, 1), ("y", "z"): (1, 0, 1)},
                        config={TITLE_PLAYOFF_KEY: {"of": playoff, "contenders": ["x", "y"]}})
    decided = crown(reg, again)
    x, y = decided.entrant("x"), decided.entrant("y")
    assert (x.records["y"], x.games) == (Record(17, 0, 15), 64)
    assert (x.worst, y.worst, y.worst_against) == (0.5, 15 / 32, "x")
    assert decided.promotion is None and reg.agent_store.champion(1).name == "x"


def test_a_playoffs_nash_table_counts_the_games_its_title_was_decided_on(scripted_stage):
    """The leaderboard's title mark opens the crowning tournament's Nash page: for a playoff, that table (and
    `league leaderboard --by nash --tournament ID`) counts its entrants' games of the round robin too, and says so,
    as the title was decided on them. Fails before: the playoff's 10 games a pair alone."""
    from league.nash_standings import read_nash
    from league.stores.tournaments import TITLE_PLAYOFF_KEY

    home, reg = scripted_stage
    for name in ("x", "y", "z", "w"):
        reg.agent_store.add(name, "mlp", 1)
    first = round_robin(reg, ["x", "y", "z", "w"], {("x", "y"): (11, 0, 9), ("x", "z"): (11, 0, 9), ("y", "z"): (12, 0, 8),
                                                    ("w", "x"): (2, 0, 18), ("w", "y"): (3, 0, 17), ("w", "z"): (4, 0, 16)})
    playoff = round_robin(reg, ["x", "y", "z"], {("x", "y"): (5, 0, 5), ("x", "z"): (4, 0, 6), ("y", "z"): (5, 0, 5)},
                          config={TITLE_PLAYOFF_KEY: {"of": first, "contenders": ["x", "y"]}})
    board = read_nash(reg.db, None, reg.ratings_cfg, tournament_id=playoff)
    assert sum(r.games for r in board.records) == 90 and sorted(board.nash.members) == ["x", "y", "z"]  # w played the round robin only
    x = next(row for row in board.rows() if row.name == "x")
    assert (x.wins, x.losses, x.games) == (31, 29, 60)
    assert board.where.endswith(f"and its entrants' games of round robin {first}")
    alone = read_nash(reg.db, None, reg.ratings_cfg, tournament_id=first)
    assert sum(r.games for r in alone.records) == 120 and "games of round robin" not in alone.where
    result = CliRunner().invoke(app, ["leaderboard", "--by", "nash", "--tournament", str(playoff),
                                      "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    assert f"its entrants' games of round robin {first}" in " ".join(result.output.split()), result.output


def test_no_playoff_between_contenders_that_all_lost_every_game_to_someone(scripted_stage):
    """A resumed run of two minutes against Necto: its snapshots all lost every game to Necto, so they tied at a
    worst matchup of 0%, and a playoff of five entrants played 1,000 more games (116 s) to separate noise at the
    floor. Fails before: a playoff of a and b. The round robin's points decide."""
    _, reg = scripted_stage
    for name in ("a", "b"):
        reg.agent_store.add(name, "mlp", 1)
    tid = round_robin(reg, ["rule", "a", "b"], {("rule", "a"): (10, 0, 0), ("rule", "b"): (10, 0, 0),
                                                ("a", "b"): (6, 0, 4)})
    crowning = crown(reg, tid)
    assert crowning.contenders(0.1, 3) == ["a", "b"] and crowning.entrant("a").worst == 0.0
    assert playoff_entrants(crowning, 0.1, 3) is None and crowning.pick == "a"


def test_the_champion_line_names_the_round_robin_that_kept_the_title(scripted_stage):
    """si-v392: promoted by an SPRT during run si, then kept by round robins 210 and 228; `league train` ended by
    naming the panel it had met before them. Fails before: "measured against rulebot 60% over 10"."""
    home, reg = scripted_stage
    for name in ("a", "b"):
        reg.agent_store.add(name, "mlp", 1)
    reg.panel_store.add("a", "si", 100, {"rulebot": Record(6, 0, 4)}, passed=True, beaten_by=None, seconds=1.0, seed=0)
    reg.promotion_store.promote_manually("a")
    assert champion_line(home, "a", "zz") == "Champion: a; measured against rulebot 60% over 10"
    tid = round_robin(reg, ["a", "b", "rule"], {("a", "b"): (7, 0, 3), ("a", "rule"): (8, 0, 2), ("b", "rule"): (6, 0, 4)},
                      name=f"1v1 {TITLE_NAME}")
    assert champion_line(home, "a", "zz") == (f"Champion: a; kept the title in round robin {tid} of 3: its worst "
                                              "matchup b 70% over 10")
    shown = " ".join(CliRunner().invoke(app, ["show", "a", "--home", str(home.root)]).output.split())
    assert f"Title round robin {tid}: kept (its worst matchup the best)" in shown and "7-0-3" in shown, shown
    assert "kept" not in " ".join(CliRunner().invoke(app, ["show", "b", "--home", str(home.root)]).output.split())
    reg.panel_store.add("a", "si", 200, {"rulebot": Record(5, 0, 5)}, passed=True, beaten_by=None, seconds=1.0, seed=1)
    assert champion_line(home, "a", "zz") == "Champion: a; measured against rulebot 50% over 10"  # the newest


def test_league_crown_plays_the_playoff_in_real_games_and_only_a_contender_takes_the_title(scripted_stage):
    """`league crown --tournament R --playoff`: randbot (the holder, 50% worst) and atbabot (40%) contend; rulebot,
    whose worst matchup was 10%, plays the playoff as their opponent but cannot take the title there. The playoff's
    games are real and recorded; crowning the round robin again after its playoff is one sentence (it would undo
    the playoff). Fails before: no --playoff option."""
    from league.stores.tournaments import TITLE_PLAYOFF_KEY

    home, reg = scripted_stage
    reg.agent_store.add("atbabot", "atba", 1)
    reg.promotion_store.promote_manually("randbot")
    first = round_robin(reg, ["randbot", "atbabot", "rulebot"],
                        {("randbot", "rulebot"): (9, 0, 1), ("rulebot", "atbabot"): (6, 0, 4),
                         ("randbot", "atbabot"): (5, 0, 5)}, config={"game": {"game_seconds": GAME_SECONDS}})
    runner = CliRunner()
    alone = runner.invoke(app, ["crown", "--tournament", str(first), "--games", "2", "--home", str(home.root)])
    assert alone.exit_code == 2 and "add --playoff" in alone.output, alone.output
    result = runner.invoke(app, ["crown", "--tournament", str(first), "--playoff", "--games", "2", "--margin", "0.1",
                                 "--workers", "1", "--home", str(home.root)])
    assert result.exit_code == 0, result.output
    (playoff,) = [t for t in reg.tournament_store.all() if t.title_playoff]
    assert playoff.config[TITLE_PLAYOFF_KEY] == {"of": first, "contenders": ["randbot", "atbabot"]}
    assert playoff.status == "finished" and playoff.entrants == ["randbot", "atbabot", "rulebot"]
    assert len(reg.game_store.games(tournament_id=playoff.id)) == 6
    assert "rulebot (cannot hold the title)" in result.output
    assert reg.agent_store.champion(1).name in ("randbot", "atbabot")
    assert f"(the playoff of round robin {first})" in " ".join(result.output.split())
    again = runner.invoke(app, ["crown", "--tournament", str(first), "--home", str(home.root)])
    assert again.exit_code == 2 and f"went to a playoff, round robin {playoff.id}" in again.output, again.output
