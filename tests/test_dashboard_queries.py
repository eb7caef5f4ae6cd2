"""The dashboard's queries read through the open league's one read-only Registry (dashboard/data.py's
`open_league`), and one decorator, `@cached_query`, makes a function of that Registry a cached datum the
pages call with the league's root (issue 57, item 7)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

import league.registry  # noqa: E402
from dashboard import data  # noqa: E402
from dashboard.app import PAGES  # noqa: E402
from league.registry import Registry  # noqa: E402
from dashboard_fixture import build_empty_league, copy_fixture_league  # noqa: E402
from dashboard_leagues import build_mixed_league, build_roles_league  # noqa: E402

DASHBOARD = Path(__file__).resolve().parents[1] / "dashboard"
APP = str(DASHBOARD / "app.py")


@pytest.fixture
def registries_built(monkeypatch):
    """How many Registry objects are built from now on (Registry.open builds one)."""
    built = []
    init = Registry.__init__

    def counting(self, *args, **kwargs):
        built.append(self)
        init(self, *args, **kwargs)

    monkeypatch.setattr(league.registry.Registry, "__init__", counting)
    return built


@pytest.mark.slow  # out of the default suite to keep it under 5 minutes (311-327 s on 2026-12-02)
def test_every_page_reads_through_the_one_registry_the_league_was_opened_with(
        fixture_league_template, tmp_path, monkeypatch, registries_built):
    """Every page of three leagues (a fixture league with tournaments, matches and climbs; a league of roles
    with probes; mixed teams), drawn and drawn again, builds one Registry per league: the one open_league
    keeps. A query that rebuilt `Registry(db)` would build one per call."""
    homes = [copy_fixture_league(fixture_league_template, tmp_path / "fixture").home.root,
             build_roles_league(tmp_path / "roles").root, build_mixed_league(tmp_path / "mixed").home.root]
    registries_built.clear()  # the leagues' own building above
    for home in homes:
        monkeypatch.setenv("LEAGUE_HOME", str(home))
        for name in PAGES:
            at = AppTest.from_file(APP, default_timeout=60)
            at.query_params["page"] = name
            at.run()
            assert not at.exception, (home, name, [e.value for e in at.exception])
            at.run()  # a rerun, as a widget change makes
    assert len(registries_built) == len(homes)


def test_no_dashboard_module_builds_a_registry_of_its_own():
    """The read-only Registry is opened in one place (data._open); queries take it as their argument."""
    for path in DASHBOARD.glob("*.py"):
        text = path.read_text()
        assert not re.search(r"\bRegistry\(", text), path.name
        assert "sqlite_utils.Database" not in text or path.name == "data.py", path.name
    assert len(re.findall(r"\bRegistry\.open\(", (DASHBOARD / "data.py").read_text())) == 1


def test_a_new_cached_query_is_one_function_and_its_decorator(tmp_path):
    """A datum the pages need: one function of the Registry under @cached_query. Pages call it with the
    league's root (cached by root and arguments for data.TTL_SECONDS, on the open league's registry);
    `.read(registry)` is the function itself."""
    roots = []
    for name, agents in (("one", ["run-v1", "run-v2"]), ("two", ["run-v1"])):
        home = build_empty_league(tmp_path / name)
        reg = Registry.open(home.db_path)
        for agent in agents:
            reg.agent_store.add(agent, "mlp", 1)
        reg.close()
        roots.append(str(home.root))
    one, two = roots
    calls, seen = [], []

    @data.cached_query
    def newest(reg: Registry, kind: str) -> str:
        calls.append(kind)
        seen.append(reg)
        return reg.agent_store.of_kind(kind)[-1].name

    assert newest(one, "mlp") == newest(one, "mlp") == "run-v2"
    assert calls == ["mlp"]  # the second call was served from the cache
    assert seen == [data.open_league(one).registry]  # the open league's, not one built for the query
    assert newest(two, "mlp") == "run-v1"  # keyed by the root
    assert newest(one, "rule") == "rule"  # and by the arguments
    assert calls == ["mlp", "mlp", "rule"]
    assert newest.read(data.open_league(one).registry, "mlp") == "run-v2" and len(calls) == 4

    @data.cached_query
    def oldest(reg: Registry, kind: str) -> str:  # the same arguments as `newest`: entries of its own
        return reg.agent_store.of_kind(kind)[0].name

    assert oldest(one, "mlp") == "run-v1"

    @data.cached_query(ttl=0)
    def polled(reg: Registry) -> int:
        calls.append("polled")
        return reg.agent_store.count()

    assert polled(one) == polled(one) and calls.count("polled") == 2  # ttl=0: read on every call
