"""`league prune`: the pure plan (hypothesis properties) and the command on a real league home."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from league import prune as prune_module
from league.cli import agents as agents_cli
from league.cli import app
from league.errors import LeagueError
from league.names import split_version
from league.prune import (ANCHOR, BELOW, DUPLICATE, TOO_FEW_GAMES, TOP, PruneAgent, plan_prune, prune_stage,
                          run_of)
from league.ratings import MleRatings, elo_expected
from league.registry import BASELINES, Registry

from conftest import play

runner = CliRunner()


# --------------------------------------------------------------------------- generated leagues


@dataclasses.dataclass(frozen=True)
class League:
    agents: list[PruneAgent]
    fit: MleRatings
    curriculum: dict[str, str]


@st.composite
def leagues(draw) -> League:
    """Baselines, then up to 12 agents of a few runs (versions not always consecutive), some
    unversioned, some of another stage or retired, parents drawn among the earlier agents, maybe a
    champion; a fit with independent ratings and intervals wide and narrow enough to overlap or not."""
    agents = [PruneAgent(name, None, "active") for name in BASELINES]
    versions: dict[str, int] = {}
    for i in range(draw(st.integers(0, 12))):
        run = draw(st.sampled_from(["a", "a", "b", "c", "solo"]))
        if run == "solo":
            name = f"solo{i}"
        else:
            versions[run] = versions.get(run, 0) + draw(st.integers(1, 2))
            name = f"{run}-v{versions[run]}"
        own = [a.name for a in agents if a.team_size is not None]
        parent = draw(st.none() | st.sampled_from(own)) if own else None
        agents.append(PruneAgent(name, draw(st.sampled_from([1, 1, 1, 1, 2])),
                                 draw(st.sampled_from(["active"] * 4 + ["retired"])), parent))
    stage = [i for i, a in enumerate(agents) if a.team_size == 1 and a.status != "retired"]
    if stage and draw(st.booleans()):
        i = draw(st.sampled_from(stage))
        agents[i] = dataclasses.replace(agents[i], status="champion")
    n = len(agents)
    rating = st.floats(1000, 2000) | st.sampled_from([1000.0, 1400.0, 1450.0, 1500.0, 1500.0, 1550.0, 2000.0])
    ratings = np.array(draw(st.lists(rating, min_size=n, max_size=n)))
    stderr = np.array(draw(st.lists(st.floats(0, 150), min_size=n, max_size=n)))
    games = np.array(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)), dtype=float)
    fit = MleRatings(names=tuple(a.name for a in agents), ratings=ratings, covariance=np.diag(stderr**2),
                     anchor="rule", games=games)
    own = [a.name for a in agents if a.team_size is not None]
    curriculum = {name: "start agent of curriculum c, stage 1v1"
                  for name in (draw(st.lists(st.sampled_from(own), max_size=2)) if own else [])}
    return League(agents, fit, curriculum)


options = st.fixed_dictionaries({
    "keep": st.integers(0, 3), "margin": st.floats(0, 400), "confidence": st.floats(0.5, 1.0),
    "min_games": st.integers(1, 20)})


def plan(league: League, **opts):
    return plan_prune(league.agents, 1, league.fit, league.curriculum, **opts)


def pool(league: League) -> list[PruneAgent]:
    return [a for a in league.agents if a.team_size == 1 and a.status != "retired" and a.name not in BASELINES]


def games(league: League, name: str) -> int:
    return int(league.fit.games[league.fit.index(name)])


def retire_all(league: League, names) -> League:
    gone = set(names)
    return dataclasses.replace(league, agents=[dataclasses.replace(a, status="retired") if a.name in gone else a
                                               for a in league.agents])


def is_duplicate(league: League, name: str, min_games: int) -> bool:
    """The duplicate criterion, written out again from the rule in docs/prune.md."""
    fit, version = league.fit, split_version(name)
    if version is None:
        return False
    low, high = fit.interval(name)
    return any(
        (vb := split_version(b.name)) is not None and vb[0] == version[0] and vb[1] > version[1]
        and games(league, b.name) >= min_games and fit.rating(b.name) >= fit.rating(name)
        and fit.interval(b.name)[0] <= high and low <= fit.interval(b.name)[1]
        for b in pool(league))


# --------------------------------------------------------------------------- properties of the plan


@settings(max_examples=300, deadline=None)
@given(leagues(), options)
def test_never_retires_the_protected_and_every_retirement_meets_its_rule(league, opts):
    p = plan(league, **opts)
    fit, retired = league.fit, set(p.retire_names)
    kept = {v.name for v in p.keep}
    assert not retired & kept
    judged = [a for a in pool(league) if games(league, a.name) >= opts["min_games"]]
    ranked = sorted(judged, key=lambda a: (-fit.rating(a.name), -games(league, a.name),
                                           -league.agents.index(a)))  # ties: more games, then newer
    champion = next((a.name for a in pool(league) if a.status == "champion"), None)
    reference = champion or (ranked[0].name if ranked else None)
    assert (p.reference.name if p.reference else None) == reference
    top = {a.name for a in ranked[:opts["keep"]]}
    # The protected: the reference, baselines, other stages, the already retired, the top N,
    # agents with too few games, curriculum agents.
    assert reference not in retired
    assert not retired & set(BASELINES)
    assert retired <= {a.name for a in pool(league)}
    assert not retired & top
    assert not retired & set(league.curriculum)
    for a in pool(league):
        if games(league, a.name) < opts["min_games"] and a.name != reference:
            assert a.name in kept and next(v for v in p.keep if v.name == a.name).because == TOO_FEW_GAMES
    # Lineage anchors: no retired agent leaves a staying child of another run behind.
    for a in league.agents:
        if a.parent in retired:
            assert a.status == "retired" or a.name in retired or run_of(a.name) == run_of(a.parent)
    # Every retirement meets the criterion it states; every candidate is either retired or kept.
    def below(name):
        return (fit.rating(reference) - fit.rating(name) > opts["margin"]
                and fit.los(reference, name) >= opts["confidence"])

    for v in p.retire:
        assert ((v.because == BELOW and below(v.name))
                or (v.because == DUPLICATE and is_duplicate(league, v.name, opts["min_games"])))
    for a in judged:
        if a.name == reference:
            continue
        if below(a.name) or is_duplicate(league, a.name, opts["min_games"]):
            assert a.name in retired | kept
        else:
            assert a.name not in retired | kept
    for v in p.keep:
        assert v.because in (TOO_FEW_GAMES, TOP, ANCHOR)


@settings(max_examples=200, deadline=None)
@given(leagues(), options)
def test_pruning_again_retires_nothing_more(league, opts):
    first = plan(league, **opts)
    again = plan(retire_all(league, first.retire_names), **opts)
    assert again.retire == ()
    assert again.reference == first.reference


@settings(max_examples=200, deadline=None)
@given(leagues(), options, st.floats(0, 400), st.floats(0.5, 1.0), st.integers(0, 4))
def test_more_caution_never_retires_more(league, opts, margin, confidence, keep):
    """A larger margin, a higher confidence or a larger --keep retires a subset of what the smaller one does."""
    base = set(plan(league, **opts).retire_names)
    for key, value in (("margin", margin), ("confidence", confidence), ("keep", keep)):
        other = set(plan(league, **{**opts, key: value}).retire_names)
        smaller, larger = (base, other) if value >= opts[key] else (other, base)
        assert larger <= smaller, key


@settings(max_examples=50, deadline=None)
@given(leagues(), options)
def test_the_plan_does_not_depend_on_how_the_fit_lists_its_names(league, opts):
    order = list(reversed(range(len(league.fit.names))))
    fit = league.fit
    shuffled = MleRatings(names=tuple(fit.names[i] for i in order), ratings=fit.ratings[order],
                          covariance=fit.covariance[np.ix_(order, order)], anchor=fit.anchor, games=fit.games[order])
    assert plan(league, **opts) == plan(dataclasses.replace(league, fit=shuffled), **opts)


def linear_run(ratings, stderr=30.0, games=40, **extra) -> League:
    """One run ppo-v1, ppo-v2, ... (each the previous one's child) plus the baselines, and
    `extra` agents name=(parent, rating)."""
    agents = [PruneAgent(name, None, "active") for name in BASELINES]
    for i in range(len(ratings)):
        agents.append(PruneAgent(f"ppo-v{i + 1}", 1, "active", f"ppo-v{i}" if i else None))
    for name, (parent, _) in extra.items():
        agents.append(PruneAgent(name, 1, "active", parent))
    n = len(agents)
    all_ratings = [1500.0] * len(BASELINES) + list(ratings) + [r for _, r in extra.values()]
    fit = MleRatings(names=tuple(a.name for a in agents), ratings=np.array(all_ratings),
                     covariance=np.eye(n) * stderr**2, anchor="rule", games=np.full(n, float(games)))
    return League(agents, fit, {})


def test_a_run_of_equal_versions_keeps_only_its_newest():
    """Within a run the parent link anchors nothing, else no version could ever go."""
    league = linear_run([1500, 1510, 1505, 1520])
    p = plan(league, keep=0)
    assert p.reference.name == "ppo-v4" and p.reference.reason == "best-rated"
    assert p.retire_names == ["ppo-v2", "ppo-v3", "ppo-v1"]  # best first
    assert all(v.because == DUPLICATE and "near-duplicate of ppo-v4" in v.reason for v in p.retire)


def test_a_parent_of_another_run_is_an_anchor_unless_that_run_goes_too():
    league = linear_run([1000, 1500], **{"fork-v1": ("ppo-v1", 1490.0)})
    p = plan(league, keep=0)
    anchor = next(v for v in p.keep if v.name == "ppo-v1")
    assert anchor.because == ANCHOR and "parent of fork-v1" in anchor.reason
    assert "below best-rated ppo-v2" in anchor.reason
    # A weak fork is retired itself, and then its parent is no anchor.
    league = linear_run([1000, 1500], **{"fork-v1": ("ppo-v1", 1000.0)})
    assert plan(league, keep=0).retire_names == ["fork-v1", "ppo-v1"]  # equal ratings: the newer first
    # A retired child anchors nothing either.
    league = retire_all(linear_run([1000, 1500], **{"fork-v1": ("ppo-v1", 1490.0)}), ["fork-v1"])
    assert plan(league, keep=0).retire_names == ["ppo-v1"]


def test_uncertain_gaps_and_small_samples_are_kept():
    league = linear_run([1500], stderr=150.0, solo=(None, 1300.0))  # 200 Elo apart, LOS about 0.83
    p = plan(league, keep=0, margin=100, confidence=0.95)
    assert p.retire == () and p.keep == ()
    assert plan(league, keep=0, margin=100, confidence=0.8).retire_names == ["solo"]
    # An older version of the same run within reach of a newer one is its near-duplicate, however wide.
    assert [v.because for v in plan(linear_run([1300, 1500], stderr=150.0), keep=0).retire] == [DUPLICATE]
    few = linear_run([1000, 1500], games=3)
    p = plan(few, keep=0)
    assert p.reference is None and p.retire == ()
    assert [(v.name, v.because) for v in p.keep] == [("ppo-v2", TOO_FEW_GAMES), ("ppo-v1", TOO_FEW_GAMES)]
    assert "too few rated games to judge (3 of 10)" in p.keep[0].reason


@pytest.mark.parametrize("opts, words", [
    ({"keep": -1}, "--keep"), ({"keep": 1.5}, "--keep"), ({"margin": -5.0}, "--margin"),
    ({"margin": float("nan")}, "--margin"), ({"margin": float("inf")}, "--margin"),
    ({"confidence": 0.3}, "--confidence"), ({"confidence": 1.01}, "--confidence"),
    ({"confidence": float("nan")}, "--confidence"), ({"min_games": 0}, "--min-games"),
])
def test_options_out_of_range_are_one_sentence(opts, words):
    with pytest.raises(LeagueError, match=words):
        plan(linear_run([1500]), **opts)


def test_split_version():
    assert split_version("ppo-1v1-v12") == ("ppo-1v1", 12)
    assert split_version("x-v1-v2") == ("x-v1", 2)
    assert split_version("rule") is None and split_version("ppo-v") is None and split_version("-v3") is None
    assert run_of("ppo-v3") == "ppo" and run_of("rule-pro") == "rule-pro"


def test_the_command_defaults_are_the_library_defaults():
    params = inspect.signature(agents_cli.prune).parameters
    for cli, lib in (("keep", "DEFAULT_KEEP"), ("margin", "DEFAULT_MARGIN"), ("confidence", "DEFAULT_CONFIDENCE"),
                     ("min_games", "DEFAULT_MIN_GAMES")):
        assert params[cli].default == getattr(prune_module, lib)


# --------------------------------------------------------------------------- a real league


STRENGTH = {"random": 700, "rule": 1500, "old-v1": 1100, "ppo-v1": 1150, "ppo-v2": 1200, "ppo-v3": 1760,
            "ppo-v4": 1820, "ppo-v5": 1850, "fork-v1": 1700}
GAMES_PER_PAIR = 12


def build_league(reg: Registry) -> None:
    """ppo-v5 is champion; old-v1 is far below it; ppo-v3 plays like ppo-v4 and ppo-v5; ppo-v1 (far
    below) started a curriculum stage; ppo-v2 (far below) is the parent of fork-v1, a run of its
    own that stays (under 200 Elo below); new-v1 has played three games."""
    reg.agent_store.add("old-v1", "mlp", 1, checkpoint_path="checkpoints/old-v1.safetensors")
    for k in range(1, 6):
        reg.agent_store.add(f"ppo-v{k}", "mlp", 1, parent=f"ppo-v{k - 1}" if k > 1 else None,
                      checkpoint_path=f"checkpoints/ppo-v{k}.safetensors")
    reg.agent_store.add("fork-v1", "mlp", 1, parent="ppo-v2", checkpoint_path="checkpoints/fork-v1.safetensors")
    reg.agent_store.add("new-v1", "mlp", 1, parent="ppo-v5", checkpoint_path="checkpoints/new-v1.safetensors")
    reg.agent_store.set_status("ppo-v5", "champion")
    reg.curriculum_store.start("cur", {}, "test", [("1v1", 1, "ppo")])
    reg.curriculum_store.update_stage("cur", 0, start_agent="ppo-v1")
    names = list(STRENGTH)
    seed = 0
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            wins = round(GAMES_PER_PAIR * elo_expected(STRENGTH[a], STRENGTH[b]))
            for g in range(GAMES_PER_PAIR):
                seed += 1
                a_wins = g < wins
                blue, orange = (a, b) if g % 2 else (b, a)
                blue_won = a_wins == (blue == a)
                play(reg, blue, orange, int(blue_won), int(not blue_won), seed=seed)
    for g in range(3):
        play(reg, "new-v1", "rule", 1, 0, seed=10_000 + g)


@pytest.fixture
def league_home(home, registry):
    build_league(registry)
    return home


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def statuses(home) -> dict[str, str]:
    reg = Registry.open(home.db_path, readonly=True)
    try:
        return {a.name: a.status for a in reg.agent_store.all(include_retired=True)}
    finally:
        reg.close()


def test_prune_stage_dry_run_and_real_run_make_the_same_plan(league_home, registry):
    before = statuses(league_home)
    games_before = len(registry.game_store.games(1))
    dry = prune_stage(registry, 1, keep=2, margin=200, dry_run=True)
    assert statuses(league_home) == before
    real = prune_stage(registry, 1, keep=2, margin=200)
    assert real == dry
    assert dry.reference.name == "ppo-v5" and dry.reference.reason == "champion"
    retired = {v.name: v for v in real.retire}
    assert set(retired) == {"old-v1", "ppo-v3"}
    assert retired["old-v1"].because == BELOW and retired["ppo-v3"].because == DUPLICATE
    kept = {v.name: v for v in real.keep}
    assert kept["ppo-v1"].because == ANCHOR and "start agent of curriculum cur" in kept["ppo-v1"].reason
    assert kept["ppo-v2"].because == ANCHOR and "parent of fork-v1" in kept["ppo-v2"].reason
    assert kept["new-v1"].because == TOO_FEW_GAMES
    after = statuses(league_home)
    assert {n for n, s in after.items() if s == "retired"} == {"old-v1", "ppo-v3"}
    assert after["ppo-v5"] == "champion" and all(after[b] == "active" for b in BASELINES)
    # History intact: every game, the retired agents' ratings and rating history.
    assert len(registry.game_store.games(1)) == games_before
    assert registry.game_store.rating("old-v1", 1).games == GAMES_PER_PAIR * (len(STRENGTH) - 1)
    assert registry.game_store.rating_history("old-v1", 1)
    # Pruning again with the same games retires nothing more.
    assert prune_stage(registry, 1, keep=2, margin=200).retire == ()


def table_rows(output: str) -> dict[str, str]:
    """A rich table's rows by their first cell, a row wrapped over several lines joined into one."""
    rows: dict[str, str] = {}
    last = None
    for line in output.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) < 2:
            continue
        if cells[0]:
            last = cells[0]
            rows[last] = ""
        rows[last] = " ".join(filter(None, [rows[last], *cells]))
    return rows


def test_prune_command_dry_run_then_real_run(league_home):
    result = run("prune", "--stage", "1v1", "--keep", "2", "--margin", "200", "--dry-run", "--home", league_home.root)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "against the champion ppo-v5" in out
    lines = table_rows(out)
    assert "would retire" in lines["old-v1"] and "below champion ppo-v5 by" in lines["old-v1"]
    assert "LOS 1.000" in lines["old-v1"] or "LOS 0.99" in lines["old-v1"]
    assert "would retire" in lines["ppo-v3"] and "near-duplicate of ppo-v" in lines["ppo-v3"]
    assert "keep" in lines["ppo-v1"] and "lineage anchor" in lines["ppo-v1"]
    assert "keep" in lines["ppo-v2"] and "parent of fork-v1" in lines["ppo-v2"]
    assert "too few rated games" in lines["new-v1"]
    assert "Would retire 2 agents" in out
    assert "retired" not in statuses(league_home).values()

    result = run("prune", "--stage", "1v1", "--keep", "2", "--margin", "200", "--home", league_home.root)
    assert result.exit_code == 0, result.output
    assert "Retired 2 agents" in result.output and "league reactivate" in result.output
    assert {n for n, s in statuses(league_home).items() if s == "retired"} == {"old-v1", "ppo-v3"}
    # Retired agents keep their history: listed with --all, shown with their ratings.
    assert "old-v1" in run("agents", "--all", "--home", league_home.root).output
    shown = run("show", "old-v1", "--home", league_home.root).output
    assert "retired" in shown and "Ratings" in shown

    again = run("prune", "--stage", "1v1", "--keep", "2", "--margin", "200", "--home", league_home.root)
    assert again.exit_code == 0 and "Nothing to retire in 1v1." in again.output
    assert run("reactivate", "ppo-v3", "--home", league_home.root).exit_code == 0


def test_the_default_keep_protects_the_five_best(league_home):
    result = run("prune", "--stage", "1v1", "--dry-run", "--home", league_home.root)
    assert result.exit_code == 0, result.output
    assert "Would retire 1 agent;" in result.output  # old-v1; ppo-v3 and fork-v1 are among the 5 best
    assert "of the 5 best by MLE" in result.output


def test_a_stage_without_champion_is_pruned_against_its_best_rated(league_home, registry):
    registry.agent_store.set_status("ppo-v5", "active")
    p = prune_stage(registry, 1, keep=2, margin=200, dry_run=True)
    assert p.reference.name == "ppo-v5" and p.reference.reason == "best-rated"
    assert "below best-rated ppo-v5" in next(v for v in p.retire if v.name == "old-v1").reason
    result = run("prune", "--stage", "2v2", "--dry-run", "--home", league_home.root)
    assert result.exit_code == 0 and "no champion and no agent with 10 rated games" in result.output
    assert "Nothing to retire in 2v2." in result.output


@pytest.mark.parametrize("args, words", [
    (["--stage", "4v4"], "Unknown stage"),
    (["--stage", "1v1", "--keep", "-1"], "--keep"),
    (["--stage", "1v1", "--margin", "-10"], "--margin"),
    (["--stage", "1v1", "--margin", "nan"], "--margin"),
    (["--stage", "1v1", "--confidence", "0.2"], "--confidence"),
    (["--stage", "1v1", "--min-games", "0"], "--min-games"),
])
def test_prune_errors_are_one_sentence_and_exit_2(league_home, args, words):
    before = statuses(league_home)
    result = run("prune", *args, "--home", league_home.root)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output
    assert statuses(league_home) == before


def test_prune_needs_a_league(tmp_path):
    result = run("prune", "--stage", "1v1", "--home", tmp_path / "nowhere")
    assert result.exit_code == 2


def test_curriculum_start_and_final_agents_are_anchors(registry):
    for name in ("c-v1", "c-v2"):
        registry.agent_store.add(name, "mlp", 2)
    registry.curriculum_store.start("cur", {}, "test", [("2v2", 2, "c")])
    registry.curriculum_store.update_stage("cur", 0, start_agent="c-v1", final_agent="c-v2")
    rows = registry.curriculum_store.stage_agents()
    assert [(r.agent, r.role) for r in rows] == [("c-v2", "final"), ("c-v1", "start")]
    assert prune_module.curriculum_anchor_names(rows) == {"c-v2": "final agent of curriculum cur, stage 2v2",
                                                          "c-v1": "start agent of curriculum cur, stage 2v2"}
