"""training.metrics.logged_cpu_minutes: where a resumed call's CPU-minutes start (the run's learning curve's x), read
from a log a user may have edited or a killed run left torn."""

from __future__ import annotations

from training.metrics import logged_cpu_minutes


def test_the_largest_figure_of_either_key_and_nothing_from_what_is_not_a_row(tmp_path):
    (tmp_path / "metrics.jsonl").write_text(
        '{"step": 1, "charts/cpu_minutes": 2.5}\n'
        '["cpu_minutes", 99]\n'  # valid JSON, not a row: skipped, not a crash
        '{"step": 2, "panel/cpu_minutes": 4.0}\n'  # a log written before charts/cpu_minutes
        '{"step": 3, "charts/cpu_minutes": NaN}\n'
        '{"step": 4, "charts/cpu_minutes": "7"}\n'
        '{"step": 5, "charts/cpu_min')  # the torn last line of a killed run
    assert logged_cpu_minutes(tmp_path) == 4.0


def test_a_run_without_a_log_starts_at_zero(tmp_path):
    assert logged_cpu_minutes(tmp_path / "new-run") == 0.0
    (tmp_path / "metrics.jsonl").write_text("")
    assert logged_cpu_minutes(tmp_path) == 0.0
