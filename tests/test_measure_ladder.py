"""training.measure.ladder: agents against the baselines at a team size, recorded only at their own."""

from __future__ import annotations

from agents.checkpoint import save_checkpoint
from agents.networks import build_network
from league.config import PolicyConfig
from training.measure.ladder import play_ladder

MLP = PolicyConfig(kind="mlp", actor_sizes=[16], critic_sizes=[16], activation="relu")


def test_an_agent_plays_every_team_size_but_is_recorded_only_at_its_own(home, registry):
    for name, team_size in (("solo", 1), ("duo", 2)):
        sha = save_checkpoint(home.root / "checkpoints" / name, build_network(MLP))
        registry.add_agent(name, "mlp", team_size, checkpoint_path=f"checkpoints/{name}.safetensors",
                           checkpoint_sha256=sha)
    results = play_ladder(registry, home, ["solo", "duo"], team_size=2, games=2, game_seconds=4.0,
                          opponents=("random", "rule"))
    assert [(r.agent, r.opponent, r.recorded) for r in results] == [
        ("duo", "random", True), ("duo", "rule", True), ("solo", "random", False), ("solo", "rule", False)]
    assert all(r.games == 2 and r.wins + r.draws + r.losses == 2 for r in results)
    recorded = registry.games(team_size=2)
    assert len(recorded) == 4  # duo's games only
    assert registry.rating("solo", 2).games == 0 and registry.rating("duo", 2).games == 4
