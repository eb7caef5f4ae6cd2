"""Lineage page: the graph of agent versions (parent -> child), coloured by rating, marked by status.

The URL names the agent shown (`?page=lineage&agent=NAME`), so an agent can be linked to."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import data, queries, ui

STATUS_SHAPES = {"champion": "diamond", "active": "circle", "retired": "cross"}
LABELS_UP_TO = 80  # above this many nodes the names are left to the tooltips
NONE = "\u2014"  # a dash that markdown does not turn into a list


def render(root: str) -> None:
    st.header("Lineage")
    agents = data.agents(root)
    nodes, edges = data.lineage_layout(root)
    c1, c2 = st.columns([1, 1])
    stages = ["all"] + sorted({int(s) for s in agents["team_size"].dropna()})
    stage = c1.selectbox("Stage", stages, key="lineage_stage",
                         format_func=lambda s: "all stages" if s == "all" else ui.stage_label(s))
    show_retired = c2.checkbox("Show retired agents", value=True, key="lineage_retired")

    info = agents.set_index("name")
    nodes = nodes.join(info[["kind", "team_size", "status", "elo", "games", "steps_trained", "parent"]], on="name")
    keep = pd.Series(True, index=nodes.index)
    if stage != "all":
        keep &= nodes["team_size"].isna() | (nodes["team_size"] == stage)
    if not show_retired:
        keep &= nodes["status"] != "retired"
    nodes = nodes[keep]
    kept = set(nodes["name"])
    edges = edges[edges["parent"].isin(kept) & edges["child"].isin(kept)]
    if nodes.empty:
        st.info("No agents to show with these filters.")
        return
    if edges.empty:
        st.info("No agent has a parent yet: versions appear here as training snapshots them.")

    event = st.altair_chart(lineage_chart(nodes, edges), width="stretch", on_select="rerun",
                            selection_mode="node", key="lineage_chart")
    clicked = _clicked_name(event)
    names = list(nodes["name"])
    champions = [n for n, s in zip(nodes["name"], nodes["status"]) if s == "champion"]
    asked = st.query_params.get("agent")
    if asked in names and asked != st.session_state.get("_lineage_asked"):
        # A link to an agent (`?page=lineage&agent=NAME`, from the Curriculum page): show it once.
        st.session_state["_lineage_asked"] = asked
        st.session_state["lineage_agent"] = asked
    if clicked in names and clicked != st.session_state.get("_lineage_clicked"):
        # A new click chooses the node; the selection lingers on later reruns, so only once.
        st.session_state["lineage_agent"] = clicked
    st.session_state["_lineage_clicked"] = clicked
    if st.session_state.get("lineage_agent") not in names:
        st.session_state["lineage_agent"] = champions[0] if champions else names[-1]
    name = st.selectbox("Agent", names, key="lineage_agent", help="Or click a node in the graph.")
    if asked != name:  # the URL names the agent shown, so the view can be linked to
        st.query_params["agent"] = name
        st.session_state["_lineage_asked"] = name
    show_details(root, name)


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
    x = alt.X("x:Q", title="generation", axis=alt.Axis(tickMinStep=1, format="d"),
              scale=alt.Scale(domain=[-0.4, right], nice=False, zero=False))
    y = alt.Y("y:Q", axis=None, scale=alt.Scale(reverse=True, padding=20))
    layers = []
    if not edges.empty:
        layers.append(alt.Chart(edges).mark_rule(color="#8a8f98", strokeWidth=1.5)
                      .encode(x=x, y=y, x2="x2:Q", y2="y2:Q"))
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


def show_details(root: str, name: str) -> None:
    details = data.agent_details(root, name)
    if details is None:
        st.warning(f"Agent {name!r} is no longer in the league.")
        return
    st.subheader(name)
    facts = {
        "kind": details["kind"],
        "stage": ui.stage_label(details["team_size"]) if details["team_size"] else "any (baseline)",
        "status": details["status"],
        "parent": details["parent"] or NONE,
        "children": ", ".join(details["children"]) or NONE,
        "created": ui.when(details["created"]),
        "steps trained": f"{details['steps_trained']:,}",
        "checkpoint": details["checkpoint_path"] or NONE,
        "notes": details["notes"] or NONE,
    }
    st.table(pd.DataFrame({"": list(facts), "value": list(facts.values())}).set_index(""))
    ratings = pd.DataFrame(details["ratings"])
    if ratings.empty:
        st.caption("No rated games yet.")
        return
    ratings["stage"] = [ui.stage_label(s) for s in ratings["team_size"]]
    st.dataframe(ratings[["stage", "elo", "mu", "sigma", "games", "wins", "draws", "losses", "last_played"]],
                 hide_index=True, width="stretch", column_config={
                     "elo": st.column_config.NumberColumn("Elo", format="%.0f"),
                     "mu": st.column_config.NumberColumn("TS mu", format="%.2f"),
                     "sigma": st.column_config.NumberColumn("TS sigma", format="%.2f")})
    recent_games(root, name)


RECENT_GAMES = 20


def recent_games(root: str, name: str) -> None:
    """The agent's latest games, in any car of either side (a mixed team is shown with all its members)."""
    games = data.games(root, agent=name, limit=RECENT_GAMES)
    with st.expander(f"Latest games ({len(games)}{'+' if len(games) == RECENT_GAMES else ''})"):
        st.dataframe(queries.games_listing(games), hide_index=True, width="stretch", column_config={
            "game": st.column_config.LinkColumn("Game", display_text=r"game=(\d+)$",
                                                help="Watch it on the Replays page.")})
