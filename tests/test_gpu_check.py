"""scripts/gpu_check.sh's two parts, smoke-checked on this CPU at tiny sizes (`--cpu`): every figure the
GPU machine will print is produced here from real games and a real learner (values not asserted)."""

from __future__ import annotations

import json

import pytest

from training.measure.gpu_check import main


@pytest.mark.slow  # about 30 s: three short training runs and a bench env
def test_the_figures_part_produces_every_figure(tmp_path, capsys):
    out = tmp_path / "figures.json"
    main(["figures", "--cpu", "--out", str(out)])
    figures = json.loads(out.read_text())
    assert figures["env"]["bare_agent_steps_per_s"] > 0 and figures["env"]["rollout_mlp_vs_bare"] > 0
    assert figures["update"]["256"]["agent_steps_per_s"] > 0
    for key in ("scale_new", "scale_old", "scale_big"):
        assert figures[key]["agent_steps_per_second"] > 0 and figures[key]["workers_mean"]["learner forward"] > 0
    assert figures["scale_new"]["workers_mean"]["physics"] > 0
    assert figures["scale_old"]["workers_mean"]["waiting for game workers"] > 0  # its workers' clocks stay there
    assert figures["scale_new"]["backend"] == "rollout" and figures["scale_old"]["backend"] == "central"
    assert figures["new_over_old"] > 0


def test_without_cuda_each_part_says_so_and_measures_nothing(capsys):
    main(["figures"])
    assert json.loads(capsys.readouterr().out) == {"cuda": False,
                                                   "reason": "no CUDA device here; run this on a GPU machine"}
