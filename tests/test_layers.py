"""The import direction of ../shared/DESIGN.md: league <- agents <- arena <- training."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKER = ROOT.parent / "shared" / "tools" / "check_layers.py"


@pytest.mark.skipif(not CHECKER.is_file(), reason="../shared/tools/check_layers.py is not beside this checkout")
def test_no_import_crosses_a_package_boundary():
    result = subprocess.run([sys.executable, str(CHECKER), str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
