"""Run `league` commands in forked children of one process that imported the command once, and
report each child's exit code, stderr, seconds and peak memory (os.wait4's rusage of that child).

    python tests/cli_probe.py CASES.json   ->  one JSON object on stdout:
        {"runs": [{"args", "exit", "signal", "stderr", "seconds", "peak_kb"}, ...]}

CASES.json holds {"timeout_s": N, "runs": [[arg, ...], ...]}. A child still running after N
seconds gets SIGALRM (it dies with "signal": 14). Every child starts from the same imported process,
so two commands' figures compare as the commands' own costs, without paying the imports once per
case (a child's peak counts only the pages it touches: compare children, not a child and the parent).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time


def _run_child(args: list[str], timeout_s: int, err_path: str) -> None:
    """In the forked child: stderr to `err_path`, stdout discarded, the command run, its code as exit."""
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(err, 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stderr = os.fdopen(2, "w", buffering=1)
    sys.stdout = os.fdopen(1, "w")
    import signal

    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    signal.alarm(timeout_s)
    from league.cli import app

    code = 1
    try:
        app(args=args, prog_name="league")
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.stderr.flush()
    os._exit(code)


def main() -> None:
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    import agents.community.install  # noqa: F401  (the bot readers, torch and the CLI, before forking)
    import league.cli  # noqa: F401

    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for i, args in enumerate(cases["runs"]):
            err_path = os.path.join(scratch, f"stderr-{i}")
            start = time.monotonic()
            pid = os.fork()
            if pid == 0:
                _run_child(args, int(cases["timeout_s"]), err_path)
            _, status, usage = os.wait4(pid, 0)
            seconds = time.monotonic() - start
            with open(err_path, errors="replace") as f:
                stderr = f.read(20_000)
            runs.append({
                "args": args,
                "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
                "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
                "stderr": stderr,
                "seconds": round(seconds, 3),
                "peak_kb": usage.ru_maxrss,
            })
    json.dump({"runs": runs}, sys.stdout)


if __name__ == "__main__":
    main()
