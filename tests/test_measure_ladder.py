"""training.measure.ladder: agents against the baselines at a team size, recorded only at their own."""

from __future__ import annotations

from agents.checkpoint import save_checkpoint
from agents.loading import load_policy
from agents.networks import build_network
from league.config import PolicyConfig
from training.evaluation import Player, play_recorded
from training.measure.ladder import play_ladder

MLP = PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], activation="relu")


def test_an_agent_plays_every_team_size_but_is_recorded_only_at_its_own(home, registry):
    for name, team_size in (("solo", 1), ("duo", 2)):
        sha = save_checkpoint(home.root / "checkpoints" / name, build_network(MLP))
        registry.agent_store.add(name, "mlp", team_size, checkpoint_path=f"checkpoints/{name}.safetensors",
                           checkpoint_sha256=sha)
    results = play_ladder(registry, home, ["solo", "duo"], team_size=2, games=2, game_seconds=4.0,
                          opponents=("random", "rule"))
    assert [(r.agent, r.opponent, r.recorded) for r in results] == [
        ("duo", "random", True), ("duo", "rule", True), ("solo", "random", False), ("solo", "rule", False)]
    assert all(r.games == 2 and r.wins + r.draws + r.losses == 2 for r in results)
    recorded = registry.game_store.games(team_size=2)
    assert len(recorded) == 4  # duo's games only
    assert registry.game_store.rating("solo", 2).games == 0 and registry.game_store.rating("duo", 2).games == 4


def test_argmax_play_reaches_every_policy(home, registry):
    """--argmax: each policy is asked for its most likely action (as tournaments play), not a sample."""
    net = build_network(MLP)
    sha = save_checkpoint(home.root / "checkpoints" / "duo", net)
    registry.agent_store.add("duo", "mlp", 2, checkpoint_path="checkpoints/duo.safetensors", checkpoint_sha256=sha)
    asked: dict[str, set[bool]] = {}

    class Asked:  # the loaded policy, noting how it is asked to act
        def __init__(self, name, policy):
            self.name, self.policy = name, policy

        def __getattr__(self, attr):
            return getattr(self.policy, attr)

        def act(self, obs, state=None, episode_start=None, deterministic=False):
            asked.setdefault(self.name, set()).add(deterministic)
            return self.policy.act(obs, state, episode_start, deterministic)

    ours = Player("duo", Asked("duo", load_policy(registry.agent_store.get("duo"), home_root=home.root)))
    theirs = Player("rule", Asked("rule", load_policy(registry.agent_store.get("rule"), home_root=home.root)))
    for deterministic in (True, False):
        asked.clear()
        play_recorded(None, [(ours, theirs)], 2, 2, 2.0, seed=0, workers=1, deterministic=deterministic)
        assert asked == {"duo": {deterministic}, "rule": {deterministic}}
