"""The import direction of DESIGN.md: league core <- agents <- arena <- training; the dashboard reads
league and arena.replay; league.cli, the `league` command, is the one top layer."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# package -> the packages of this project it may import (DESIGN.md); league/cli/ is the top layer
MAY_IMPORT = {
    "league": set(),
    "agents": {"league"},
    "arena": {"league", "agents"},
    "training": {"league", "agents", "arena"},
    "dashboard": {"league", "arena.replay"},
}
HEAVY = {"torch", "rlgym", "RocketSim", "streamlit", "ray", "gymnasium"}  # never at module level in league/


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


def _imports(tree: ast.Module):
    """(module name, line, whether at module level) for every absolute import in a parsed file."""
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno, id(node) in top) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module, node.lineno, id(node) in top


def _may(package: str, name: str) -> bool:
    return any(name == ok or name.startswith(ok + ".") for ok in MAY_IMPORT[package] | {package})


def test_no_import_crosses_a_package_boundary():
    """Every import, lazy ones included, read from the source (the rule of ../shared/tools/check_layers.py,
    kept here so a fresh clone checks it too); a relative import cannot leave its package."""
    crossings = []
    for package in MAY_IMPORT:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("league/cli/") or rel == "league/__main__.py":
                continue
            for name, line, top in _imports(ast.parse(path.read_text(encoding="utf-8"), filename=rel)):
                if name.split(".")[0] in MAY_IMPORT and not _may(package, name):
                    crossings.append(f"{rel}:{line}: {package}/ imports {name}")
                if package == "league" and name.split(".")[0] in HEAVY and top:
                    crossings.append(f"{rel}:{line}: league/ imports {name} at module level")
    assert crossings == [], "\n".join(crossings)
