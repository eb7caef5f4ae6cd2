"""`league average`: one agent from the mean of several agents' weights, on real league homes and real games."""

from __future__ import annotations

import torch
from typer.testing import CliRunner

from agents.checkpoint import load_checkpoint, save_checkpoint
from agents.loading import checkpoint_file
from agents.networks import build_network
from league.cli import app
from league.config import PolicyConfig
from league.registry import Registry

MLP = PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], activation="relu")


def league(home, *args):
    return CliRunner().invoke(app, [*map(str, args), "--home", str(home.root)])


def imported(home, tmp_path, name: str, seed: int, cfg: PolicyConfig = MLP, stage: str = "1v1", steps: int = 0):
    """A network of its own random weights (its normaliser's statistics too), imported as `name`."""
    torch.manual_seed(seed)
    net = build_network(cfg)
    with torch.no_grad():
        for buffer in net.buffers():
            if buffer.is_floating_point():
                buffer.add_(torch.rand_like(buffer))
    save_checkpoint(tmp_path / name, net, steps=steps, training_config={"stage": stage, "seed": seed})
    result = league(home, "import", tmp_path / f"{name}.safetensors", "--name", name)
    assert result.exit_code == 0, result.output
    return net


def test_the_average_holds_the_mean_of_every_weight_and_plays(home, tmp_path):
    nets = [imported(home, tmp_path, f"s{k}", seed=k, steps=1000 * k) for k in (1, 2, 3)]
    result = league(home, "average", "s1", "s3", "s2", "--name", "soup")
    assert result.exit_code == 0, result.output
    assert "into soup (mlp, 1v1, 3,000 steps; its parent s3, the most trained)" in " ".join(result.output.split())
    reg = Registry.open(home.db_path)
    soup = reg.agent_store.get("soup")
    ckpt = load_checkpoint(checkpoint_file(soup, home.root), expected_sha256=soup.checkpoint_sha256)
    states = [n.state_dict() for n in nets]
    for key, value in ckpt.net.state_dict().items():
        expected = sum(s[key].double() for s in states) / 3 if value.is_floating_point() else states[1][key]
        assert torch.allclose(value.double(), expected, atol=1e-6), key
    assert reg.agent_store.by_id(soup.parent_id).name == "s3" and soup.steps_trained == 3000
    assert soup.config["averaged_from"] == ["s1", "s3", "s2"] and soup.config["stage"] == "1v1"
    played = league(home, "match", "soup", "s3", "--max-games", "2", "--game-seconds", "4", "--seed", "3")
    assert played.exit_code == 0, played.output
    assert {g.blue for g in reg.game_store.games()} | {g.orange for g in reg.game_store.games()} >= {"soup", "s3"}


def test_what_cannot_be_averaged_is_one_sentence_and_writes_nothing(home, tmp_path):
    imported(home, tmp_path, "a", seed=1)
    imported(home, tmp_path, "b", seed=2)
    imported(home, tmp_path, "wide", seed=3, cfg=PolicyConfig(kind="mlp", actor_sizes=[32], critic_sizes=[16],
                                                               activation="relu"))
    imported(home, tmp_path, "team", seed=4, stage="2v2")
    before = sorted(p.name for p in home.checkpoints.iterdir())
    cases = {
        ("a",): "Give two or more different agents to average.",
        ("a", "a"): "Give two or more different agents to average.",
        ("a", "rule"): "'rule' is a rule agent with no weights of the league's; only trained agents (mlp, lstm)",
        ("a", "wide"): "'a' and 'wide' have different networks; only agents of one architecture",
        ("a", "team"): "'a' and 'team' play different team sizes; only agents of one stage",
        ("a", "nobody"): "nobody",
    }
    for names, message in cases.items():
        result = league(home, "average", *names, "--name", "soup")
        assert result.exit_code == 2, (names, result.output)
        assert message in " ".join(result.output.split()) and "Traceback" not in result.output, result.output
    taken = league(home, "average", "a", "b", "--name", "b")
    assert taken.exit_code == 2 and "An agent named 'b' already exists" in taken.output
    assert sorted(p.name for p in home.checkpoints.iterdir()) == before
    assert Registry.open(home.db_path).agent_store.find("soup") is None


def test_a_run_goes_on_from_the_average_of_its_snapshots_as_from_its_parent(trained_home):
    """An averaged snapshot named as the run's next version is resumed like any snapshot, with its most trained
    ingredient's optimizer state and return scale (a fresh Adam would jolt the first updates)."""
    from agents.averaged import average_agents
    from conftest import TINY_TRAINING
    from league.config import load_config
    from training.selfplay import SelfPlayTrainer

    home, result = trained_home
    reg = Registry.open(home.db_path)
    *earlier, last = result.versions
    name = f"mlp-1v1-v{len(result.versions) + 1}"
    soup = average_agents(home, reg, [*earlier[-2:], last], name)
    parent = reg.agent_store.get(last)
    made, before = (load_checkpoint(checkpoint_file(a, home.root), expected_sha256=a.checkpoint_sha256)
                    for a in (soup, parent))
    assert made.meta.optimizer["learner_stats"] == before.meta.optimizer["learner_stats"]
    for k, state in before.optimizer_state["state"].items():
        assert all(torch.equal(v, made.optimizer_state["state"][k][key]) for key, v in state.items())
    cfg = load_config(stage="1v1", sets=[*TINY_TRAINING, "training.steps=256", "training.eval_every_snapshots=0"])
    went_on = SelfPlayTrainer(cfg, home, reg, resume=name).run()
    assert went_on.versions[-1] == f"mlp-1v1-v{len(result.versions) + 2}" and went_on.steps > soup.steps_trained
    assert reg.agent_store.by_id(reg.agent_store.get(went_on.versions[-1]).parent_id).name == name
