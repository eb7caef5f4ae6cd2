"""Every `league train` form the README writes parses as written and reaches the run it names (issue 60
item 7: `--league --minutes 1` took `--minutes` as the roles file). The three ends (one run's trainer, the
curriculum driver and the league of roles) are replaced by recorders: what is checked is the command line,
on a real league home, not the training."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from league.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"
runner = CliRunner()
# What the README's placeholders stand for here.
VALUES = {"N": "1000", "M": "0.1", "NAME": "mlp-1v1-v1", "TEACHER": "necto", "HOST:PORT": "10.0.0.5:6379",
          "FILE": "configs/curriculum.yaml"}


def readme_forms() -> list[str]:
    """The `league train ...` commands of the README: its code blocks' lines and its backtick spans
    (comments after `#` dropped, `\\|` read as `|`), those that give at least one option."""
    text = README.read_text()
    found = [line.split("#")[0].strip() for line in text.splitlines() if line.startswith("league train ")]
    found += [span.replace("\\|", "|").strip() for span in re.findall(r"`(league train [^`]+)`", text)]
    return sorted({f for f in found if f.split()[2:]})


def expand(form: str) -> list[list[str]]:
    """The form's command lines: with every optional part, and with none; of alternatives (`a|b`) the first;
    placeholders replaced by VALUES."""
    with_all = re.sub(r"\[([^\[\]]*)\]", r"\1", form)
    without = re.sub(r"\s*\[[^\[\]]*\]", "", form)
    lines = []
    for line in dict.fromkeys([with_all, without]):
        line = re.sub(r"(--steps N) \| --minutes M", r"\1", line)
        words = [w.split("|")[0] for w in line.split()[2:]]
        lines.append([VALUES.get(w, w) for w in words])
    return lines


@pytest.fixture
def recorded(monkeypatch):
    """The ends a `league train` command reaches, each recording what it was handed."""
    import league.cli.curriculum
    import league.cli.roles
    import training.selfplay

    calls: list[tuple[str, dict]] = []

    class Trainer:
        def __init__(self, cfg, home, registry, **kw):
            calls.append(("run", {"stage": cfg.stage, **kw}))

        def run(self, budget):
            return SimpleNamespace(run="x", steps=0, seconds=0.0, interrupted=False, versions=[], timing={},
                                   profile=None, champion=None, versions_said=lambda: "none")

    monkeypatch.setattr(training.selfplay, "SelfPlayTrainer", Trainer)
    monkeypatch.setattr(league.cli.curriculum, "run_curriculum_with_progress",
                        lambda home, file, **kw: calls.append(("curriculum", {"file": file, **kw})))
    monkeypatch.setattr(league.cli.roles, "run_league_with_progress",
                        lambda home, file, **kw: calls.append(("league", {"file": file, **kw})))
    return calls


def train(home, args: list[str]):
    return runner.invoke(app, ["train", *args, "--home", str(home.root)])


def test_the_readme_writes_the_forms_this_test_knows():
    forms = readme_forms()
    assert "league train --league [configs/league-roles.yaml] --minutes M [--name N] [--backend ray]" in forms
    assert len(forms) >= 12, forms


@pytest.mark.parametrize("args", [a for f in readme_forms() for a in expand(f)], ids=" ".join)
def test_every_readme_form_of_league_train_works_as_written(home, recorded, args):
    result = train(home, args)
    assert result.exit_code == 0, result.output
    ((route, handed),) = recorded
    assert route == ("league" if "--league" in args else "curriculum" if "--curriculum" in args else "run")


def test_league_without_a_file_takes_the_shipped_roles_and_keeps_its_options(home, recorded):
    result = train(home, ["--league", "--minutes", "1", "--name", "x"])
    assert result.exit_code == 0, result.output
    assert recorded == [("league", {"file": None, "name": "x", "config": None, "minutes": 1.0,
                                    "overrides": recorded[0][1]["overrides"], "sets": None})]


def test_league_with_a_file_before_or_after_the_options(home, recorded, tmp_path):
    roles = tmp_path / "roles.yaml"
    for args in (["--league", str(roles), "--minutes", "2"], ["--minutes", "2", "--league", str(roles)]):
        assert train(home, args).exit_code == 0
    assert [(r, c["file"], c["minutes"]) for r, c in recorded] == [("league", roles, 2.0)] * 2


def test_a_file_with_neither_league_nor_curriculum_is_still_refused(home, recorded):
    result = train(home, ["configs/league-roles.yaml", "--minutes", "1"])
    assert result.exit_code == 2 and "FILE is only for --curriculum or --league" in result.output
    assert not recorded
