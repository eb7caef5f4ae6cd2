"""The import direction of DESIGN.md: league core <- agents <- arena <- training; the dashboard reads
league and arena.replay; league.cli, the `league` command, is the one top layer."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT.parent / "shared" / "tools" / "check_layers.py"


def test_the_import_contracts_in_pyproject_hold():
    """import-linter's contracts ([tool.importlinter] in pyproject.toml), checked from scratch (no cache)."""
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert lint, "lint-imports is missing: install the dev extra (pip install -e '.[dev]')"
    result = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_command_imports_the_other_packages_only_inside_its_commands():
    """What import-linter cannot see: league.cli imports agents/arena/training lazily, so `league agents` stays fast."""
    code = ("import sys, league.cli; print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'agents', 'arena', 'training', 'torch', 'rlgym', 'RocketSim', 'streamlit', 'ray'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.skipif(not CHECKER.is_file(), reason="../shared/tools/check_layers.py is not beside this checkout")
def test_no_import_crosses_a_package_boundary():
    result = subprocess.run([sys.executable, str(CHECKER), str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
