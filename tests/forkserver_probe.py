"""A worker target for tests/test_worker_preload.py: which of some modules were loaded when it started."""

import sys


def loaded(conn, names: list[str]) -> None:
    conn.send([n for n in names if n in sys.modules])
