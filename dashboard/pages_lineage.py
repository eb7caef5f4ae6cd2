"""Lineage page: the graph of agent versions (parent -> child), coloured by rating, marked by status.

The URL names the agent shown (`?page=lineage&agent=NAME`), so an agent can be linked to."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import queries, ui
from dashboard.agent_view import show_agent
from dashboard.lineage_compact import FOLD_FROM, layout

STATUS_SHAPES = {"champion": "diamond", "active": "circle", "retired": "cross"}
LABELS_UP_TO = 80  # above this many nodes the names are left to the tooltips


def render(root: str) -> None:
    st.header("Lineage")
    agents = queries.agents(root)
    c1, c2, c3 = st.columns([1, 1, 1])
    stages = ["all"] + sorted({int(s) for s in agents["team_size"].dropna()})
    stage = c1.selectbox("Stage", stages, key="lineage_stage",
                         format_func=lambda s: "all stages" if s == "all" else ui.stage_label(s))
    show_retired = c2.checkbox("Show retired agents", value=True, key="lineage_retired")
    fold = c3.checkbox("Fold long runs", value=True, key="lineage_fold",
                       help=f"Draw a run's middle versions ({FOLD_FROM} or more in a row) as one edge; the agent "
                            "chosen below and the champions are always drawn.")

    info = agents.set_index("name")
    keep = pd.Series(True, index=info.index)
    if stage != "all":
        keep &= info["team_size"].isna() | (info["team_size"] == stage)
    if not show_retired:
        keep &= info["status"] != "retired"
    names = [n for n in agents["name"] if keep[n]]
    if not names:
        st.info("No agents to show with these filters.")
        return
    clicked = _clicked_name(st.session_state.get("lineage_chart"))  # the graph's selection, from the last run
    if clicked in names and clicked != st.session_state.get("_lineage_clicked"):
        # A new click chooses the node; the selection lingers on later reruns, so only once.
        st.session_state["lineage_agent"] = clicked
    st.session_state["_lineage_clicked"] = clicked
    name = choose_agent(names, [n for n in names if info.at[n, "status"] == "champion"])
    graph = queries.lineage_graph(root).subgraph(names)
    nodes, edges = layout(graph, {name, *(n for n in names if info.at[n, "status"] == "champion")}, fold)
    nodes = nodes.join(info[["kind", "team_size", "status", "elo", "games", "steps_trained", "parent"]], on="name")
    if edges.empty:
        st.info("No agent has a parent yet: versions appear here as training snapshots them.")
    st.altair_chart(lineage_chart(nodes, edges), width="stretch", on_select="rerun", selection_mode="node",
                    key="lineage_chart")
    show_agent(root, name)


def choose_agent(names: list[str], champions: list[str]) -> str:
    """The agent shown: the URL's (`?page=lineage&agent=NAME`, once per new link), else the one chosen, else a
    champion, else the newest; the URL then names it, so the view can be linked to."""
    asked = st.query_params.get("agent")
    if asked in names and asked != st.session_state.get("_lineage_asked"):
        st.session_state["_lineage_asked"] = asked
        st.session_state["lineage_agent"] = asked
    if st.session_state.get("lineage_agent") not in names:
        st.session_state["lineage_agent"] = champions[0] if champions else names[-1]
    name = st.selectbox("Agent", names, key="lineage_agent", help="Or click a node in the graph.")
    if asked != name:
        st.query_params["agent"] = name
        st.session_state["_lineage_asked"] = name
    return name


def _clicked_name(event) -> str | None:
    try:
        points = event.selection["node"]
    except (AttributeError, KeyError, TypeError):
        return None
    return points[0].get("name") if points else None


def lineage_chart(nodes: pd.DataFrame, edges: pd.DataFrame) -> alt.LayerChart:
    node = alt.selection_point(name="node", fields=["name"], on="click")
    height = max(330, min(40 * (nodes["y"].max() + 1) + 70, 1200))
    labelled = len(nodes) <= LABELS_UP_TO
    right = nodes["x"].max() + (1.6 if labelled else 0.4)  # room for the last generation's names
    x_scale = alt.Scale(domain=[-0.4, right], nice=False, zero=False)
    y_scale = alt.Scale(reverse=True, padding=20)
    x = alt.X("x:Q", title="generation (a folded run counts one)", axis=alt.Axis(tickMinStep=1, format="d"),
              scale=x_scale)
    y = alt.Y("y:Q", axis=None, scale=y_scale)
    layers = []
    if not edges.empty:
        layers.append(alt.Chart(edges).mark_rule(color="#8a8f98", strokeWidth=1.5).encode(
            x=x, y=y, x2="x2:Q", y2="y2:Q",
            strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=["parent", "teacher"], range=[[1, 0], [5, 4]]),
                                      legend=alt.Legend(title="edge", labelExpr="datum.label == 'teacher' ? "
                                                        "'distilled from' : 'parent'"))))
        folded = edges[edges["folded"] > 0].assign(
            mx=lambda e: (e["x"] + e["x2"]) / 2, my=lambda e: (e["y"] + e["y2"]) / 2,
            label=lambda e: [f"{k} versions" for k in e["folded"]])
        if not folded.empty:
            layers.append(alt.Chart(folded).mark_text(dy=-8, fontSize=11, color="#5a5f68").encode(
                x=alt.X("mx:Q", scale=x_scale), y=alt.Y("my:Q", scale=y_scale, axis=None), text="label:N"))
    points = alt.Chart(nodes).mark_point(filled=True, size=220, stroke="#222", strokeWidth=1).encode(
        x=x, y=y,
        color=alt.Color("elo:Q", title="Elo (own stage)", scale=alt.Scale(scheme="viridis")),
        shape=alt.Shape("status:N", scale=alt.Scale(domain=list(STATUS_SHAPES), range=list(STATUS_SHAPES.values())),
                        legend=alt.Legend(title="status")),
        opacity=alt.condition(node, alt.value(1.0), alt.value(0.45)),
        tooltip=["name:N", "kind:N", "status:N", alt.Tooltip("elo:Q", format=".0f"), "games:Q", "parent:N",
                 alt.Tooltip("steps_trained:Q", format=",")],
    ).add_params(node)
    layers.append(points)
    if labelled:
        layers.append(alt.Chart(nodes).mark_text(align="left", dx=11, dy=-9, fontSize=11).encode(
            x=x, y=y, text="name:N"))
    return alt.layer(*layers).properties(height=height)
