"""Distillation (training.distill, league train --distill): the phase's schedule, a student fitted to
a teacher's whole distribution, and whole runs with real games, Necto labelling and SQLite:
versions recorded with the teacher and its licence, refusals in one sentence with nothing written."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import yaml
from typer.testing import CliRunner

from agents.checkpoint import load_checkpoint
from agents.loading import load_policy
from agents.networks import build_network
from agents.nn_policy import NetworkPolicy
from agents.obs import OBS_DIM
from community_bots import bots_dir
from league.cli import app
from league.config import DistillConfig, PolicyConfig, PpoConfig
from league.registry import Registry
from training.distill import MIN_TEACHER_GAMES, DistillPhase
from training.opponents import agent_spec
from training.guide import Guide, UpdatePlan
from training.measure.stepwise import act, observe_rewards
from training.ppo import PpoLearner

runner = CliRunner()
TINY = ["runner.workers=1", "runner.envs_per_worker=4", "ppo.steps_per_env=32", "ppo.minibatch_size=256",
        "training.eval_every_snapshots=0", "training.snapshot_every_steps=2000", "policy.actor_sizes=[64]",
        "policy.critic_sizes=[64]", "panel.playoff_games=0",  # a tiny run's snapshots tie at 0%: a playoff of 600 games
        "panel.title_games=0"]  # and its title round robin against Necto and Element (test_panel's) took 30-60 s a run


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def train(home, *args):
    sets = [x for s in TINY for x in ("--set", s)]
    return run("train", "--stage", "1v1", "--home", home.root, *sets, *args)


# ---- the schedule


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_the_phase_ends_when_held_out_agreement_stops_rising():
    phase = DistillPhase(DistillConfig(teacher="t", patience=3), ended_at=None, clock=FakeClock())
    assert phase.guide(0).distilling
    for steps, agreement in enumerate([0.2, 0.5, 0.6, 0.6, 0.601]):
        phase.after_held_out(agreement, 1000 * steps)
    assert phase.active  # two updates without a new best so far (0.601 is within the noise margin)
    phase.after_held_out(0.55, 6000)
    assert not phase.active and phase.ended_at == 6000 and "not passed its best (60.0%)" in phase.reason
    assert phase.guide(7000) == phase.guide(10**9) and not phase.guide(7000).distilling
    assert phase.guide(7000).weight == DistillConfig().guide_weight  # a permanent guide by default


def test_the_phase_ends_at_its_budget_and_the_guide_can_decay():
    clock = FakeClock()
    phase = DistillPhase(DistillConfig(teacher="t", minutes=1, patience=0, guide_weight=0.2, guide_decay_steps=1000),
                         ended_at=None, clock=clock)
    phase.guide(500)  # the phase starts at the network's 500th step
    clock.now = 59.0
    phase.after_held_out(0.1, 900)
    assert phase.active
    clock.now = 61.0
    phase.after_held_out(0.1, 1000)
    assert not phase.active and phase.ended_at == 1000
    assert [phase.guide(s).weight for s in (1000, 1500, 2000, 5000)] == pytest.approx([0.2, 0.1, 0.0, 0.0])


def test_a_resumed_phase_goes_on_with_the_rest_of_its_budget_and_its_best():
    """Run te resumed a copy its first call's clock had stopped and copied for ten more minutes: the phase's
    budget started again. Now a checkpoint keeps what the phase spent, and a resumed call spends the rest."""
    clock = FakeClock()
    first = DistillPhase(DistillConfig(teacher="t", minutes=1, patience=0), ended_at=None, clock=clock)
    first.guide(0)
    clock.now = 40.0
    first.after_held_out(0.4, 3000)
    kept = first.stats()
    assert kept == {"distill_steps": 3000.0, "distill_seconds": 40.0, "distill_best": 0.4}
    clock.now = 1000.0  # the next call starts later, from the checkpoint
    again = DistillPhase.resumed(DistillConfig(teacher="t", minutes=1, patience=0), kept, 3000)
    again.clock = clock
    again.guide(3000)
    clock.now = 1019.0
    again.after_held_out(0.35, 4000)
    assert again.active and again.best == 0.4  # 59 s of its 60
    clock.now = 1021.0
    again.after_held_out(0.45, 5000)
    assert not again.active and again.ended_at == 5000 and again.stats() == {"distill_ended_at": 5000.0}
    spent = DistillPhase.resumed(DistillConfig(teacher="t", steps=3000), kept, 3000)  # nothing left: PPO from here
    assert not spent.active and spent.ended_at == 3000 and "spent before this call" in spent.reason
    assert not DistillPhase.resumed(DistillConfig(teacher="t"), {"distill_ended_at": 7.0}, 99).active


def test_the_teacher_keeps_its_share_until_the_student_passes_it():
    phase = DistillPhase(DistillConfig(teacher="t", teacher_share=0.3, pass_score=0.55), ended_at=100)
    assert phase.teacher_share(0.9, MIN_TEACHER_GAMES - 1) == 0.3  # too few games to say
    assert phase.teacher_share(0.5, 100) == 0.3
    assert phase.teacher_share(0.6, 100) == 0.0
    assert DistillPhase(DistillConfig(teacher="t"), ended_at=None).teacher_share(0.0, 0) == 0.0  # while distilling


# ---- the fit


def test_distilling_fits_the_student_to_a_teacher_network_and_its_controls():
    """A frozen teacher with Necto's heads labels random states; the student, distilled alone (no
    reward), comes to choose the teacher's controls on states it was never trained on."""
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny batches: one thread is several times faster, and on a busy host far more
    config = PolicyConfig(kind="mlp", actor_sizes=[64], critic_sizes=[16], car_frame=False, action_space="necto")
    teacher = build_network(config, obs_dim=6)
    with torch.no_grad():
        for p in teacher.actor.parameters():
            p.mul_(40.0)  # a confident teacher: its heads' choices are clear
    student = build_network(config, obs_dim=6)
    learner = PpoLearner(student, PpoConfig(learning_rate=1e-2, epochs=4, minibatch_size=256, steps_per_env=32),
                         slots=16, obs_dim=6, seed=0, teacher=True)
    distilling = UpdatePlan(guide=Guide(1.0, distilling=True))
    gen = torch.Generator().manual_seed(1)
    held = []
    for _ in range(30):
        while not learner.buffer.full:
            obs = torch.randn(16, 6, generator=gen)
            act(learner, obs, torch.zeros(16), teacher_probs=teacher.space.probs(teacher.logits(obs)).detach())
            observe_rewards(learner, torch.zeros(16))
        held.append(learner.held_out()[0])
        learner.update(torch.randn(16, 6, generator=gen), torch.zeros(16), distilling)
    torch.set_num_threads(threads)
    # all five heads right on 1 state in 72 by chance; a head read in another order stays near that
    assert held[0] < 0.2 and held[-1] > 0.7, held
    obs = torch.randn(512, 6, generator=gen)
    ours, _ = NetworkPolicy(student).act(obs.numpy(), deterministic=True)
    theirs, _ = NetworkPolicy(teacher).act(obs.numpy(), deterministic=True)
    assert ours.shape == (512, 8) and (ours == theirs).all(axis=1).mean() > 0.7


# ---- whole runs


def with_bots(root):
    """`root` made a league home with Necto and Element added; the root."""
    assert run("init", "--home", root).exit_code == 0
    for kind, sub in (("necto", "Necto"), ("element", "Element")):
        done = run("bot", "add", kind, bots_dir() / sub, "--home", root)
        assert done.exit_code == 0, done.output
    return root


@pytest.fixture(scope="module")
def bots_template(tmp_path_factory):
    """A league home with Necto and Element added."""
    return with_bots(tmp_path_factory.mktemp("distill-bots"))


@pytest.fixture
def bots(bots_template, tmp_path):
    import shutil

    from league.home import LeagueHome

    shutil.copytree(bots_template, tmp_path / "home")
    return LeagueHome(tmp_path / "home")


def test_distilling_necto_records_versions_with_the_teacher_and_its_licence(bots):
    done = train(bots, "--distill", "necto", "--steps", 512, "--name", "student")
    assert done.exit_code == 0, done.output
    assert "distilling necto into necto heads" in done.output
    assert "The teacher's labels: " in done.output and "of the run's core-seconds" in done.output
    reg = Registry.open(bots.db_path)
    versions = [a for a in reg.agent_store.all() if a.name.startswith("student-v")]
    assert versions and all(a.config["distilled_from"]["teacher"] == "necto" for a in versions)
    last = versions[-1]
    assert last.config["policy"]["action_space"] == "necto" and last.config["policy"]["prev_controls"]
    # configs/distill.yaml: PPO after the phase samples near the argmax and takes small, constant steps.
    assert last.config["ppo"]["temperature"] == 0.5
    assert last.config["ppo"]["learning_rate"] == 1e-4
    assert last.config["ppo"]["lr_schedule"] == "constant"
    # ... snapshots of the weights' moving average, and the league picks its champion through the panel.
    assert last.config["training"]["ema_decay"] == 0.99
    assert last.config["promotion"]["during_training"] and last.config["promotion"]["training_min_score"] == 0
    ckpt = load_checkpoint(bots.root / last.checkpoint_path, expected_sha256=last.checkpoint_sha256)
    assert ckpt.net.space.name == "necto" and ckpt.meta.training_config["distilled_from"]["teacher"] == "necto"
    controls, _ = NetworkPolicy(ckpt.net).act(np.zeros((3, OBS_DIM), np.float32), deterministic=True)
    assert controls.shape == (3, 8)  # a student with heads speaks controls
    # Sampled (league match --sampled, and as an opponent in training) it draws at the 0.5 it trained at.
    assert load_policy(last, home_root=bots.root).temperature == 0.5
    assert agent_spec(reg, last.name, bots.root).temperature == 0.5
    assert agent_spec(reg, "necto", bots.root).policy().name == "necto"
    rows = [json.loads(line) for line in (bots.runs / "student" / "metrics.jsonl").read_text().splitlines()]
    held = [r["distill/held_out_agreement"] for r in rows if "distill/held_out_agreement" in r]
    assert held and all(0 <= a <= 1 for a in held)
    shown = run("show", last.name, "--home", bots.root)
    assert "distilled from" in shown.output and "necto" in shown.output and "CC BY-NC-SA 4.0" in shown.output
    lineage = run("lineage", last.name, "--home", bots.root)
    assert "distilled from necto" in lineage.output
    exported = run("export", last.name, bots.root.parent / "out", "--home", bots.root)
    assert exported.exit_code == 0, exported.output
    assert "derived from community bots" in exported.output and "CC BY-NC-SA 4.0" in exported.output


@pytest.mark.parametrize("args, says", [
    (["--distill", "nobody"], "nobody"),
    (["--distill", "element", "--stage", "2v2"], "does not play 2v2"),
    (["--distill", "element", "--action-space", "necto"], "cannot hold element's actions"),
    (["--distill", "necto", "--curriculum"], "--distill goes with one run"),
])
def test_a_teacher_that_cannot_teach_is_one_sentence_and_nothing_is_written(bots, args, says):
    stage = [] if "--stage" in args or "--curriculum" in args else ["--stage", "1v1"]
    sets = [x for s in TINY for x in ("--set", s)]
    done = run("train", *stage, *args, "--steps", 512, "--name", "refused", "--home", bots.root, *sets)
    assert done.exit_code == 2, done.output
    assert says in done.output and done.output.strip().count("\n") == 0, done.output
    assert not [a for a in Registry.open(bots.db_path).agent_store.all() if a.name.startswith("refused")]
    assert not (bots.runs / "refused").exists()


def test_a_retired_teacher_is_refused(bots):
    assert run("retire", "necto", "--home", bots.root).exit_code == 0
    done = train(bots, "--distill", "necto", "--steps", 512, "--name", "refused")
    assert done.exit_code == 2 and "retired" in done.output, done.output


@pytest.mark.slow  # 30-50 s of a real distilling run: after the default suite (README, "Tests")
def test_a_curriculum_stage_that_names_a_teacher_builds_a_student_that_speaks_its_actions(bots, tmp_path):
    """A stage with training.distill.teacher gets the teacher's heads and previous controls, as --distill's run
    does; a stage that names policy.action_space keeps its own."""
    stage = {"name": "copy", "stage": "1v1", "max_steps": 512, "eval_every_steps": 512, "on_gate_fail": "advance",
             "gate": {"min_games": 2, "confidence": 3.0, "game_seconds": 5, "win_rate_vs_rule": 0.0},
             "config": {"training": {"distill": {"teacher": "necto"}}}}
    kept = {**stage, "name": "table", "config": {**stage["config"], "policy": {"action_space": "table"}}}
    for name, stages in (("copy", [stage]), ("table", [kept])):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, "stages": stages}))
    sets = [x for s in TINY for x in ("--set", s)]
    done = run("train", "--curriculum", tmp_path / "copy.yaml", "--home", bots.root, *sets)
    assert done.exit_code == 0, done.output
    reg = Registry.open(bots.db_path)
    student = [a for a in reg.agent_store.all() if a.name.startswith("copy-copy-v")][-1]
    assert student.config["policy"]["action_space"] == "necto" and student.config["policy"]["prev_controls"]
    assert student.config["distilled_from"]["teacher"] == "necto"
    ckpt = load_checkpoint(bots.root / student.checkpoint_path, expected_sha256=student.checkpoint_sha256)
    assert ckpt.net.space.name == "necto"
    done = run("train", "--curriculum", tmp_path / "table.yaml", "--home", bots.root, *sets)
    assert done.exit_code == 0, done.output
    student = [a for a in Registry.open(bots.db_path).agent_store.all() if a.name.startswith("table-table-v")][-1]
    assert student.config["policy"]["action_space"] == "table"


def test_a_student_reads_its_own_previous_controls_and_forgets_them_when_an_episode_starts():
    net = build_network(PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], action_space="necto",
                                     prev_controls=True))
    assert net.obs_dim == OBS_DIM + 8
    policy = NetworkPolicy(net)
    obs = np.random.default_rng(0).standard_normal((4, OBS_DIM)).astype(np.float32)
    state = policy.initial_state(4)
    sent, state = policy.act(obs, state, np.zeros(4, bool), deterministic=True)
    assert np.array_equal(state[1], sent)  # what it sent is what it reads next
    _, _, read = policy._logits(obs, state, np.array([True, False, True, False]))
    assert not read[[0, 2]].any() and np.array_equal(read[[1, 3]], sent[[1, 3]])
    with torch.inference_mode():  # and the network really sees them: other previous controls, other logits
        a, _, _ = policy._logits(obs, (None, np.zeros((4, 8), np.float32)), None)
        b, _, _ = policy._logits(obs, (None, np.ones((4, 8), np.float32)), None)
    assert not torch.allclose(a, b)


def test_an_own_mlp_agent_is_distilled_into_an_lstm(trained_home):
    """A new network from an old agent: the student speaks its teacher's table and carries no licence."""
    home, result = trained_home
    teacher = result.versions[-1]
    done = train(home, "--policy", "lstm", "--distill", teacher, "--steps", 512, "--name", "lstm-student",
                 "--set", "policy.lstm_hidden=32")
    assert done.exit_code == 0, done.output
    reg = Registry.open(home.db_path)
    student = [a for a in reg.agent_store.all() if a.name.startswith("lstm-student-v")][-1]
    assert student.kind == "lstm" and student.config["policy"]["action_space"] == "table"
    assert not student.config["policy"]["prev_controls"]  # a league network reads none: nor does its student
    assert student.config["distilled_from"] == {"teacher": teacher, "kind": "mlp", "sources": [],
                                                "sha256": reg.agent_store.get(teacher).checkpoint_sha256}
    refused = train(home, "--distill", teacher, "--action-space", "necto", "--steps", 512, "--name", "refused")
    assert refused.exit_code == 2 and "cannot hold" in refused.output, refused.output
