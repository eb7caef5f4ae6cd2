"""The Streamlit dashboard: reads the league database (read-only) and replay files."""
