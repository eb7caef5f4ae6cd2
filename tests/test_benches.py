"""The training and tournament benchmarks run end to end at tiny sizes and report sane figures."""

import pytest

from training.measure.tournament import bench_tournament
from training.measure.train import bench_train


@pytest.mark.slow  # trains end to end: CI runs it after the default suite
def test_bench_train_reports_throughput_and_time_split():
    r = bench_train("1v1", iterations=1, batch=512, workers=1, envs_per_worker=2,
                    extra=["policy.actor_sizes=[32]", "policy.critic_sizes=[32]"], backends=("central", "pipelined", "rollout"))
    assert r.agent_steps_per_second > 0 and r.collection_only_steps_per_second > 0
    share = r.share.parts()  # the central backend's: collection, inference and update each take time
    assert abs(sum(share.values()) - 1.0) < 1e-6 and all(v > 0 for v in share.values())
    assert set(r.backends) == {"central", "central-pipelined", "rollout"} and r.against("central-pipelined") > 0
    assert r.against("rollout") > 0
    # Pipelined, inference runs beside the update: the loop waits for collection and updates.
    assert r.backends["central-pipelined"][1].inference == 0 and r.backends["central-pipelined"][1].update > 0
    assert r.batch == 512
    # The limit the same run measures: its parts alone, in sequence (issue 59).
    assert r.update_rows_per_second > 0 and r.epochs == 1
    assert 0 < r.limit_steps_per_second < r.collection_only_steps_per_second and r.ratio_to_limit > 0


def test_bench_tournament_reports_games_and_the_bare_physics_ratio():
    r = bench_tournament(games_per_pair=1, game_seconds=4, workers=1, ceiling_seconds=0.5)
    assert r.games == 6 and r.games_per_second > 0 and r.ceiling_ticks_per_second > 0
    assert r.times_bare_physics > 1.0  # a real tournament cannot beat bare physics
    assert r.community_wall_seconds is None and r.community_over_plain is None


@pytest.mark.slow  # two round robins and a community bot's setup: CI runs it after the default suite
def test_bench_tournament_times_the_community_bots_in_the_mlps_places():
    from community_bots import bots_dir

    r = bench_tournament(games_per_pair=1, game_seconds=4, workers=1, ceiling_seconds=0.5, bots=bots_dir())
    assert r.community_wall_seconds > 0 and r.community_over_plain == r.wall_seconds / r.community_wall_seconds
