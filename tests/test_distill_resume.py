"""Issue 56, item 10: a distilled student is resumed and trained from as what its checkpoint says it is:
its action space, its previous controls, the temperature and learning-rate schedule it trained at, and
(resumed) its teacher; a teacher that cannot teach it is skipped (the default kickstart) or refused in one
correct sentence; a flag that would change its network is refused, never dropped. Real runs on RocketSim
with Necto as the teacher, on a real league home."""

from __future__ import annotations

import re
import shutil

import pytest
from typer.testing import CliRunner

from league.cli import app
from league.home import LeagueHome
from league.registry import Registry

from test_distill import TINY, with_bots

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def train(home, *args):
    sets = [x for s in TINY for x in ("--set", s)]
    return run("train", "--home", home.root, *sets, *args)


@pytest.fixture(scope="module")
def student_template(tmp_path_factory):
    """A league home with Necto, Element and a student distilled from Necto (`stu-v1`)."""
    root = with_bots(tmp_path_factory.mktemp("distill-resume"))
    done = train(LeagueHome(root), "--stage", "1v1", "--distill", "necto", "--steps", 512, "--name", "stu")
    assert done.exit_code == 0, done.output
    return root


@pytest.fixture
def home(student_template, tmp_path):
    shutil.copytree(student_template, tmp_path / "home")
    return LeagueHome(tmp_path / "home")


def versions(home, run_name):
    return [a for a in Registry.open(home.db_path).agent_store.all() if a.name.startswith(f"{run_name}-v")]


def kept_what_it_is(agent) -> None:
    policy, ppo = agent.config["policy"], agent.config["ppo"]
    assert policy["action_space"] == "necto" and policy["prev_controls"] is True, policy
    assert ppo["temperature"] == 0.5 and ppo["learning_rate"] == 1e-4 and ppo["lr_schedule"] == "constant", ppo


def test_a_resumed_student_keeps_its_heads_temperature_rate_and_teacher(home):
    """Refused before (rule-pro's kickstart applied to Necto's heads, with a sentence suggesting
    policy.action_space=table); resumed with the kickstart off, it ran at temperature 1 and rate 5e-4
    falling and its snapshots recorded the table."""
    done = train(home, "--resume", "stu-v1", "--steps", 512)
    assert done.exit_code == 0, done.output
    assert "distilling necto" in done.output  # its teacher goes on (the phase or the guide after it)
    resumed = versions(home, "stu")[1:]
    assert resumed and all(a.config["training"]["distill"]["teacher"] == "necto" for a in resumed)
    for agent in resumed:
        kept_what_it_is(agent)


def test_a_run_resumed_after_its_copy_says_it_goes_on_with_ppo_not_that_it_distils(home):
    """Resuming a student whose phase ended said "distilling necto into necto heads ..." though it went on with PPO
    (run si's resumption from si-v244). Fails before: the same line as a new run's."""
    quick = ["--set", "panel.title_games=0"]
    done = train(home, "--stage", "1v1", "--distill", "necto", "--steps", 2048, "--name", "student",
                 "--set", "training.distill.steps=512", *quick)
    assert done.exit_code == 0 and "distillation ended at" in done.output, done.output
    last = Registry.open(home.db_path).agent_store.run_versions("student")[-1]
    again = train(home, "--resume", last, "--steps", 1024, *quick)
    assert again.exit_code == 0, again.output
    said = " ".join(again.output.split())
    assert "distilling necto" not in said and "with a guide of 0.1 towards necto (distillation ended at " in said, said
    # the versions this call made, not the run's earlier ones again (run si's resumption listed all 348)
    made = Registry.open(home.db_path).agent_store.run_versions("student")
    assert f"versions: {made[-1]} Time split" in said and made.index(last) == len(made) - 2, said
    from training.selfplay import TrainResult

    many = TrainResult("si", [f"si-v{i}" for i in range(1, 349)], 0, 0.0, False, 0, {}, made=104)
    assert many.versions_said() == "si-v245 .. si-v348 (104 versions)"


def test_a_copy_from_a_trained_agent_says_where_it_ended_in_the_steps_its_progress_counts(home):
    """Run tc (`--stage 2v2 --from lc-v52 --distill necto`) said "distillation ended at 12,302,592 steps" while its
    progress lines counted 1.2M: lc-v52's own training was counted in. Fails before: the network's steps alone."""
    done = train(home, "--stage", "2v2", "--from", "stu-v1", "--distill", "necto", "--steps", 2048, "--name", "fork",
                 "--set", "training.distill.steps=512", "--set", "panel.title_games=0")
    assert done.exit_code == 0, done.output
    said = " ".join(done.output.split())
    found = re.search(r"distillation ended at ([\d,]+) steps of this run \(([\d,]+) of the network's training; ", said)
    assert found, said
    here, total = (int(g.replace(",", "")) for g in found.groups())
    trained = Registry.open(home.db_path).agent_store.get("stu-v1").steps_trained
    assert trained > 0 and total == trained + here and 512 <= here < 2048, (trained, here, total)


def test_a_copy_resumed_before_its_budget_is_spent_copies_only_the_rest(home):
    """Run te (`--resume td-v32`, whose ten-minute copy its run's clock had stopped) copied for ten more minutes: the
    phase's budget started again. Fails before: the resumed call copied all 1,536 steps again."""
    quick = ["--set", "panel.title_games=0", "--set", "training.distill.patience=0"]
    done = train(home, "--stage", "1v1", "--distill", "necto", "--steps", 512, "--name", "held",
                 "--set", "training.distill.steps=1536", *quick)
    assert done.exit_code == 0 and "distillation ended" not in done.output, done.output
    last = Registry.open(home.db_path).agent_store.get(versions(home, "held")[-1].name)
    spent = last.steps_trained
    again = train(home, "--resume", last.name, "--steps", 2048, *quick)
    said = " ".join(again.output.split())
    found = re.search(r"distillation ended at ([\d,]+) steps of this run \(([\d,]+) of the network's training; its "
                      r"budget is spent", said)
    assert again.exit_code == 0 and found, said
    here, total = (int(g.replace(",", "")) for g in found.groups())
    assert 0 < here < 1536 and total - here == spent and total >= 1536, (spent, here, total)


def test_a_run_from_a_student_keeps_its_heads_and_skips_a_kickstart_it_cannot_hold(home):
    done = train(home, "--stage", "2v2", "--from", "stu-v1", "--steps", 512, "--name", "fork")
    assert done.exit_code == 0, done.output
    assert "no kickstart" in done.output and "cannot hold rule-pro's actions" in done.output, done.output
    forked = versions(home, "fork")
    assert forked and forked[0].config["training"]["distill"]["teacher"] == ""
    for agent in forked:
        kept_what_it_is(agent)


def test_a_resumed_2v2_snapshot_goes_on_at_2v2_and_another_stage_is_one_sentence(home):
    """`league train --resume td-v32` (a 2v2 snapshot) without --stage went on at 1v1: the run's next snapshots
    played Element and the 1v1 panel (seventeenth round, run td). Fails before: the resumed versions are 1v1."""
    done = train(home, "--stage", "2v2", "--from", "stu-v1", "--steps", 512, "--name", "two")
    assert done.exit_code == 0, done.output
    last = versions(home, "two")[-1].name
    again = train(home, "--resume", last, "--steps", 512)
    assert again.exit_code == 0, again.output
    made = versions(home, "two")
    assert len(made) > 1 and all(a.team_size == 2 for a in made), [(a.name, a.team_size) for a in made]
    refused = train(home, "--stage", "1v1", "--resume", made[-1].name, "--steps", 512)
    assert refused.exit_code == 2 and f"{made[-1].name!r} is a 2v2 snapshot" in refused.output, refused.output
    assert refused.output.strip().count("\n") == 0 and [a.name for a in versions(home, "two")] == [a.name for a in made]


@pytest.mark.parametrize("args, says", [
    (["--resume", "stu-v1", "--action-space", "table"], "policy.action_space is 'table', but stu-v1's network has 'necto'"),
    (["--from", "stu-v1", "--set", "policy.prev_controls=false", "--name", "x"], "policy.prev_controls"),
    (["--from", "stu-v1", "--distill", "element", "--name", "x"], "element cannot teach stu-v1"),
])
def test_what_would_change_a_students_network_is_one_sentence(home, args, says):
    done = train(home, "--stage", "1v1", *args, "--steps", 512)
    assert done.exit_code == 2, done.output
    assert says in done.output and done.output.strip().count("\n") == 0, done.output
    assert "policy.action_space=table" not in done.output  # impossible for an existing network
    assert len(versions(home, "stu")) == 1 and not versions(home, "x")



@pytest.mark.slow  # 30-50 s of a real distilling run: after the default suite (README, "Tests")
def test_a_users_ppo_keys_win_in_a_distilling_run_and_moved_keys_say_where_they_went(home):
    """Issue 57, item 2: distill.temperature and distill.ppo_learning_rate silently replaced ppo.temperature,
    ppo.learning_rate and ppo.lr_schedule, so a user's --set ppo.learning_rate was dropped in such a run.
    Now configs/distill.yaml gives the defaults under the user's layers: what a user sets is honoured."""
    done = train(home, "--stage", "1v1", "--distill", "necto", "--steps", 512, "--name", "mine",
                 "--set", "ppo.learning_rate=3e-4", "--set", "ppo.temperature=0.7")
    assert done.exit_code == 0, done.output
    ppo = versions(home, "mine")[-1].config["ppo"]
    assert ppo["learning_rate"] == 3e-4 and ppo["temperature"] == 0.7 and ppo["lr_schedule"] == "constant", ppo
    assert "learning rate 0.0003 with a guide" in " ".join(done.output.split())
    falling = train(home, "--stage", "1v1", "--distill", "necto", "--steps", 512, "--name", "falling",
                    "--set", "ppo.lr_schedule=linear")
    assert falling.exit_code == 0, falling.output
    assert versions(home, "falling")[-1].config["ppo"]["lr_schedule"] == "linear"
    # the start says the rate falls (it said "learning rate 0.0001" alone, as for a constant rate)
    assert "learning rate 0.0001 falling linearly to 0 over the run's budget" in " ".join(falling.output.split())
    moved = train(home, "--stage", "1v1", "--distill", "necto", "--steps", 512, "--name", "moved",
                  "--set", "training.distill.temperature=0.5")
    assert moved.exit_code == 2 and "is now ppo.temperature" in moved.output, moved.output


@pytest.mark.slow  # 30-50 s of a real distilling run: after the default suite (README, "Tests")
def test_progress_while_distilling_shows_held_out_agreement(home):
    """Issue 57, item 9: the progress line showed steps, rate and reward while distilling, nothing of agreement."""
    from league.cli.progress import agreement_text

    best: list[float] = []
    assert agreement_text({"charts/steps_per_second": 5.0}, best) == ""
    assert agreement_text({"distill/held_out_agreement": 0.41}, best) == "held-out agreement 41.0% (best 41.0%)"
    assert agreement_text({"distill/held_out_agreement": 0.38}, best) == "held-out agreement 38.0% (best 41.0%)"
    done = train(home, "--stage", "1v1", "--distill", "necto", "--steps", 512, "--name", "shown")
    assert done.exit_code == 0 and "held-out agreement" in done.output, done.output
