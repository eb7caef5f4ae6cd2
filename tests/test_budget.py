"""The training budget (training/budget.py): one rule for steps, minutes or both, 0 meaning no limit."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from league.config import MINUTES_MAX, STEPS_MAX, load_config
from league.registry import Registry
from league.errors import LeagueError
from training.budget import FIRST_ROUND_DIVISOR, Budget, Clock, clock_round

SECONDS_MAX = MINUTES_MAX * 60
steps_limits = st.integers(0, STEPS_MAX)
seconds_limits = st.one_of(st.just(0.0), st.floats(1e-3, SECONDS_MAX))
budgets = st.builds(Budget, steps_limits, seconds_limits)
used_steps = st.integers(0, 2 * STEPS_MAX)
used_seconds = st.floats(0.0, 2 * SECONDS_MAX)


@settings(max_examples=300, deadline=None)
@given(budgets, used_steps, used_seconds)
def test_spent_is_a_share_and_done_is_a_share_of_one(budget, steps, seconds):
    share = budget.spent(steps, seconds)
    assert 0.0 <= share <= 1.0
    assert budget.done(steps, seconds) == (share >= 1.0)
    if budget.unlimited:
        assert share == 0.0 and not budget.done(steps, seconds)


@settings(max_examples=300, deadline=None)
@given(budgets, used_steps, used_steps, used_seconds, used_seconds)
def test_spending_more_never_spends_less(budget, s1, s2, t1, t2):
    lo_s, hi_s = sorted((s1, s2))
    lo_t, hi_t = sorted((t1, t2))
    assert budget.spent(lo_s, lo_t) <= budget.spent(hi_s, hi_t)
    assert not budget.done(lo_s, lo_t) or budget.done(hi_s, hi_t)


@settings(max_examples=200, deadline=None)
@given(budgets, used_steps, used_seconds)
def test_whichever_limit_is_further_on_counts(budget, steps, seconds):
    by_steps = Budget(budget.steps).spent(steps, seconds)
    by_clock = Budget(seconds=budget.seconds).spent(steps, seconds)
    assert budget.spent(steps, seconds) == max(by_steps, by_clock)
    assert budget.done(steps, seconds) == (Budget(budget.steps).done(steps, seconds)
                                           or Budget(seconds=budget.seconds).done(steps, seconds))


@settings(max_examples=300, deadline=None)
@given(st.builds(Budget, steps_limits, st.integers(0, 10**7).map(float)), st.integers(0, 10**6),
       st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6))
def test_what_remains_spends_like_the_rest_of_the_budget(budget, s1, s2, t1, t2):
    # Whole seconds, so the float arithmetic is exact.
    left = budget.remaining(s1, float(t1))
    if left is None:
        assert budget.done(s1, float(t1))
        return
    assert (left.steps > 0) == (budget.steps > 0) and (left.seconds > 0) == (budget.seconds > 0)
    assert left.done(s2, float(t2)) == budget.done(s1 + s2, float(t1 + t2))
    assert left.steps_left(s2) == budget.steps_left(s1 + s2)


@given(budgets)
def test_nothing_spent_leaves_the_whole_budget(budget):
    assert not budget.done(0, 0.0) and budget.remaining(0, 0.0) == budget
    assert budget.steps_left(0) == (budget.steps or None)


@pytest.mark.parametrize("steps, seconds", [(-1, 0.0), (0, -1.0), (0, float("nan")), (0, float("inf"))])
def test_a_budget_is_never_negative_or_endless_in_seconds(steps, seconds):
    with pytest.raises(ValueError):
        Budget(steps, seconds)


def test_a_clock_reads_its_seconds_from_the_time_source():
    now = [100.0]
    clock = Budget(steps=1000, seconds=60.0).start(lambda: now[0])
    assert isinstance(clock, Clock) and clock.started == 100.0 and clock.spent() == 0.0
    now[0] = 130.0
    assert clock.elapsed() == 30.0 and clock.spent(250) == 0.5 and clock.spent(750) == 0.75
    assert clock.remaining(400) == Budget(600, 30.0) and not clock.done(999)
    assert clock.done(1000)
    now[0] = 160.0
    assert clock.done() and clock.remaining() is None and clock.spent() == 1.0
    assert not Budget().start(lambda: now[0]).done(10**9)


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.none(), st.integers(0, STEPS_MAX)), st.one_of(st.none(), st.floats(0.0, MINUTES_MAX)))
def test_a_flag_given_alone_replaces_the_configs_other_limit(steps, minutes):
    configured = Budget.from_config(load_config(stage="1v1", overrides={"training.steps": 777,
                                                                         "training.minutes": 3.0}).training)
    budget = Budget.from_flags(steps, minutes, configured)
    if steps is None and minutes is None:
        assert budget == Budget(777, 180.0)
    else:
        assert budget.steps == (steps or 0) and budget.minutes == pytest.approx(minutes or 0.0)


@pytest.mark.parametrize("steps, minutes, flag", [(-1, None, "--steps"), (STEPS_MAX + 1, None, "--steps"),
                                                  (None, -0.5, "--minutes"), (None, float("nan"), "--minutes"),
                                                  (10, MINUTES_MAX * 2, "--minutes")])
def test_a_budget_flag_out_of_range_is_one_sentence_naming_it(steps, minutes, flag):
    with pytest.raises(LeagueError, match=f"^{flag} must be between 0 and"):
        Budget.from_flags(steps, minutes, Budget(5))


# ---------------------------------------------------------------- the budget's readers


@pytest.mark.parametrize("budget, steps, elapsed, share", [(Budget(steps=1000), 250, 30.0, 0.25),
                                                           (Budget(seconds=60.0), 5000, 30.0, 0.5),
                                                           (Budget(1000, 60.0), 900, 30.0, 0.9)])
def test_the_train_progress_bar_fills_with_the_share_spent_and_shows_the_steps(budget, steps, elapsed, share):
    from league.cli.progress import budget_bar
    from training.progress import UpdateDone

    bar, on_progress = budget_bar(budget)
    on_progress(UpdateDone(steps, budget.steps or None, elapsed, {"charts/steps_per_second": 10.0}))
    (task,) = bar.tasks
    assert task.completed == pytest.approx(share) and task.total == 1.0 and task.fields["steps"] == steps


@pytest.fixture
def chunks(monkeypatch):
    """The budgets the curriculum hands its self-play trainer, which here stops at once as Ctrl-C would."""
    from training import selfplay

    given = []

    class Chunk:
        def __init__(self, cfg, *args, **kwargs):
            pass

        def run(self, budget, **kwargs):
            given.append(budget)
            return type("Result", (), {"interrupted": True})()

    monkeypatch.setattr(selfplay, "SelfPlayTrainer", Chunk)
    return given


def run_one_stage(home, minutes):
    from training.curriculum import CurriculumTrainer, stage_configs
    from training.curriculum_spec import parse_curriculum

    spec = parse_curriculum({"name": "clock", "stages": [
        {"name": "a", "stage": "1v1", "max_steps": 150, "eval_every_steps": 100, "gate": {"min_games": 2}}]}, "test")
    return CurriculumTrainer(spec, home, Registry.open(home.db_path), stage_configs(spec, home), minutes=minutes).run()


@pytest.mark.parametrize("minutes", [0.0, 5.0])
def test_a_curriculum_chunk_gets_the_time_its_run_has_left(home, chunks, minutes):
    result = run_one_stage(home, minutes)
    assert result.status == "interrupted" and result.message.startswith("interrupted (final snapshot saved)")
    (budget,) = chunks  # handed over as a value, never through the config
    assert budget.steps == 100
    assert (0.0 < budget.minutes < minutes) if minutes else budget.seconds == 0.0


def test_a_curriculum_whose_time_is_spent_trains_nothing_more(home, chunks):
    result = run_one_stage(home, 1e-9)
    assert result.status == "interrupted" and result.message.startswith("its time budget is spent")
    assert chunks == []


# Issue 47, item 16: a round on a clock fits the time left.
@settings(max_examples=300, deadline=None)
@given(st.integers(1, 65_536), st.integers(1, 4096), st.floats(0.0, 1e5), st.one_of(st.none(), st.floats(1.0, 1e7)),
       st.integers(0, 10**8))
def test_a_round_on_a_clock_fits_the_time_left_at_the_pace_so_far(full, slots, left, pace, ahead):
    length = clock_round(full, slots, left, pace, ahead)
    assert 0 <= length <= full
    if pace is None:  # no round trained yet: a short one, to learn the pace
        assert length == max(1, full // FIRST_ROUND_DIVISOR)
    elif length:
        assert length * slots <= pace * left - ahead and length >= max(1, full // FIRST_ROUND_DIVISOR)
    else:  # less than a short round fits
        assert (pace * left - ahead) // slots < max(1, full // FIRST_ROUND_DIVISOR)
