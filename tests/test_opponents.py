"""The self-play share of the opponent mix and the env layout built from it (pure, no games)."""

from types import SimpleNamespace

import numpy as np

from league.config import OpponentMix
from training.opponents import lay_out, split_mix


def fake_games(n_envs: int, team_size: int) -> SimpleNamespace:
    """What lay_out reads of a VecGame: rows env by env, blue cars first in each."""
    cars = 2 * team_size
    return SimpleNamespace(num_envs=n_envs, env_of_row=np.repeat(np.arange(n_envs), cars),
                           teams=np.tile(np.repeat(np.array([0, 1], np.int8), team_size), n_envs))


def test_the_latest_share_is_the_self_play_share_and_the_rest_is_the_league_mix():
    share, league = split_mix(OpponentMix(latest=0.5, past=0.1, pfsp=0.2, rule=0.1, random=0.1))
    assert share == 0.5 and league == {"past": 0.1, "pfsp": 0.2, "rule": 0.1, "random": 0.1, "community": 0.0,
                                     "panel": 0.0}
    assert split_mix(OpponentMix(latest=1, past=1, pfsp=0, rule=0, random=2))[0] == 0.25
    assert split_mix(OpponentMix(latest=0, past=0, pfsp=0, rule=0, random=0))[0] == 1.0  # nothing else: self-play


def test_layout_self_play_envs_first_then_the_learner_on_alternate_sides():
    layout = lay_out(fake_games(4, 2), OpponentMix(latest=1, past=1, pfsp=0, rule=0, random=0), team_size=2)
    # Envs 0 and 1 are pure self-play (every car learns); env 2: learner blue, env 3: learner orange.
    assert layout.learner_rows.tolist() == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 15]
    assert layout.learner_envs.tolist() == [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3]
    assert layout.league_envs.tolist() == [2, 3]
    assert layout.opponent_rows.tolist() == [[10, 11], [12, 13]]


def test_pure_self_play_has_no_league_envs():
    layout = lay_out(fake_games(3, 1), OpponentMix(latest=1, past=0, pfsp=0, rule=0, random=0), team_size=1)
    assert layout.learner_rows.tolist() == list(range(6)) and layout.opponent_rows.shape == (0, 1)
