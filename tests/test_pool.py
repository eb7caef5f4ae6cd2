"""The one worker pool (arena.engine.pool) on local processes: its protocol and its one failure path.

The Ray kind speaks the same protocol through Host.handle; tests/test_ray_training.py and
tests/test_ray_hardening.py run it on a local Ray instance (slow set)."""

import os
import signal
import time

import pytest

from arena.engine.placement import Placement
from arena.engine.pool import FAILED, OK, REFUSED, Host, ProcessPool, open_pool
from arena.engine.procs import WorkerError
from league.errors import LeagueError


class Toy:
    """A service for the tests: answers, refuses, fails, or tells its pid."""

    def __init__(self, name: str, refuse_start: bool = False, hang_start: bool = False):
        if refuse_start:
            raise LeagueError("the toy's file is damaged.")
        if hang_start:
            time.sleep(3600)
        self.name = name

    def stderr_to(self, path: str) -> None:
        """This worker's standard error (its stacks, when asked) goes to `path`."""
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND), 2)

    def hang(self):
        time.sleep(3600)

    def echo(self, value):
        return self.name, value

    def pid(self) -> int:
        return os.getpid()

    def refuse(self):
        raise LeagueError("no room left on the toy's disk.")

    def crash(self):
        raise ValueError("a bug in the toy")


def test_calls_are_answered_in_order_and_the_first_answer_comes_back_first():
    with open_pool(Placement.PROCESSES, Toy, [("a",), ("b",)], "Toy worker") as pool:
        assert pool.size == 2 and len(set(pool.pids)) == 2
        pool.call(0, "echo", 1)
        pool.call(0, "echo", 2)
        pool.call(1, "echo", 3)
        assert [pool.reply(0), pool.reply(0)] == [("a", 1), ("a", 2)]
        assert pool.next_reply() == (1, ("b", 3))
        assert pool.shared([1, 2]) == [1, 2]  # nothing to share between processes: the value itself
        with pytest.raises(RuntimeError, match="without a call under way"):
            pool.next_reply()


def test_a_refusal_is_one_sentence_and_a_bug_its_traceback():
    with open_pool(Placement.PROCESSES, Toy, [("a",)], "Toy worker") as pool:
        pid = pool.pids[0]
        pool.call(0, "refuse")
        with pytest.raises(WorkerError) as refused:
            pool.reply(0)
    assert str(refused.value) == f"Toy worker 0 (pid {pid}) stopped: no room left on the toy's disk"
    assert not refused.value.lost and refused.value.index == 0
    with open_pool(Placement.PROCESSES, Toy, [("a",)], "Toy worker") as pool:
        pool.call(0, "crash")
        with pytest.raises(WorkerError, match=r"(?s)Toy worker 0 \(pid \d+\) failed:\n.*ValueError: a bug in the toy"):
            pool.reply(0)


def test_a_worker_that_cannot_start_says_why_before_any_call():
    with pytest.raises(WorkerError, match=r"Toy worker 1 \(pid \d+\) stopped: the toy's file is damaged"):
        ProcessPool(Toy, [("a",), ("b", True)], "Toy worker")


def test_a_killed_worker_is_one_sentence_with_its_pid_and_signal_and_can_be_replaced():
    with open_pool(Placement.PROCESSES, Toy, [("a",), ("b",)], "Toy worker") as pool:
        victim = pool.pids[1]
        os.kill(victim, signal.SIGKILL)
        pool.call(0, "echo", "still here")
        pool.call(1, "echo", "gone")
        with pytest.raises(WorkerError) as lost:
            pool.reply(1)
        assert str(lost.value) == f"Toy worker 1 (pid {victim}) died without a traceback (signal 9)."
        assert lost.value.lost and lost.value.index == 1
        assert pool.reply(0) == ("a", "still here")  # the others go on
        assert pool.restart(1, ("b2",))
        pool.call(1, "echo", "back")
        assert pool.reply(1) == ("b2", "back") and pool.pids[1] != victim


def test_the_host_answers_the_protocol_pairs_that_ray_actors_return():
    host = Host(Toy, ("a",))
    assert host.ready() == (OK, os.getpid())
    assert host.handle("echo", 5) == (OK, ("a", 5))
    assert host.handle("refuse") == (REFUSED, "no room left on the toy's disk")
    status, text = host.handle("crash")
    assert status == FAILED and "ValueError: a bug in the toy" in text
    assert Host(Toy, ("a", True)).ready() == (REFUSED, "the toy's file is damaged")
    with pytest.raises(LeagueError, match="Unknown placement .threads."):
        with open_pool("threads", Toy, [("a",)], "Toy worker"):
            pass


def test_remove_keeps_the_named_workers_in_that_order_and_stops_the_others():
    import psutil

    with open_pool(Placement.PROCESSES, Toy, [("a",), ("b",), ("c",)], "Toy worker") as pool:
        pids = pool.pids
        pool.remove([2, 0])
        assert pool.size == 2 and pool.pids == [pids[2], pids[0]]
        pool.call(0, "echo", 1)
        pool.call(1, "echo", 2)
        assert [pool.reply(0), pool.reply(1)] == [("c", 1), ("a", 2)]
        gone = psutil.Process(pids[1]) if psutil.pid_exists(pids[1]) else None
        assert gone is None or gone.status() == psutil.STATUS_ZOMBIE or not gone.is_running()


def test_one_vocabulary_of_placements_old_names_with_a_note(capsys):
    from arena.engine.placement import Backend, as_placement
    from league import config_tree

    config_tree._NOTED.clear()
    assert as_placement("serial") is Placement.IN_PROCESS and as_placement("multiprocessing") is Placement.PROCESSES
    assert as_placement("local", "--backend") is Placement.PROCESSES and as_placement(Placement.RAY) is Placement.RAY
    notes = capsys.readouterr().err.splitlines()
    assert len(notes) == 3 and notes[2] == ("note: --backend: placement: 'local' is now called 'processes'; the old "
                                            "name works until the next release.")
    with pytest.raises(LeagueError, match=r"Unknown placement 'threads'; expected one of in-process, processes, ray\."):
        as_placement("threads")
    assert [Backend(b).placement for b in ("rollout", "central", "in-process", "ray")] == [
        Placement.PROCESSES, Placement.PROCESSES, Placement.IN_PROCESS, Placement.RAY]
    assert Backend.games_of("in-process") is Placement.IN_PROCESS
    assert {Backend.games_of(b) for b in ("auto", "rollout", "central", "ray", None)} == {Placement.PROCESSES}
    from arena.game_pool import contest_placement

    assert contest_placement("local") is Placement.PROCESSES and contest_placement("ray") is Placement.RAY
    with pytest.raises(LeagueError, match=r"Unknown placement 'in-process'; expected processes or ray\."):
        contest_placement("in-process")  # a contest's workers are processes or Ray actors
    with pytest.raises(ValueError, match="a pool's workers run at one of processes, ray"):
        with open_pool(Placement.IN_PROCESS, Toy, [("a",)], "Toy worker"):
            pass


@pytest.mark.slow  # out of the default suite to keep it under 5 minutes (311-327 s on 2026-12-02)
def test_a_worker_that_answers_nothing_is_stopped_with_every_stack_written(tmp_path, capfd):
    """Run tc's title round robin played no game in 30 minutes and its driver waited on: a hung worker held it
    forever, and nothing said where. Fails before: no stall limit (the call waited an hour)."""
    # Limits of seconds, not fractions: a busy machine's worker may take a second to start or echo (not a hang).
    with ProcessPool(Toy, [("a",), ("b",)], "Toy worker", stall_seconds=5.0) as pool:
        stacks = [tmp_path / f"worker-{k}.txt" for k in range(2)]
        for k in range(2):
            pool.call(k, "stderr_to", str(stacks[k]))
            pool.reply(k)
        hung = pool.pids[0]
        pool.call(0, "hang")
        pool.call(1, "echo", 1)
        assert pool.next_reply() == (1, ("b", 1))  # the others' answers still come
        started = time.monotonic()
        with pytest.raises(WorkerError) as stalled:
            pool.next_reply()
        assert time.monotonic() - started < 30
    assert str(stalled.value) == (f"Toy worker 0 (pid {hung}) answered nothing for 5 s, so it was stopped (the stacks "
                                  "of every worker and of this process are on standard error)")
    assert stalled.value.lost and stalled.value.index == 0 and pool.size == 0
    assert "in hang" in stacks[0].read_text() and "in serve" in stacks[1].read_text()  # each worker's own stack
    driver = capfd.readouterr().err
    assert "toy workers stalled; the driver's threads:" in driver and "in _stalled" in driver
    with pytest.raises(WorkerError, match=r"Toy worker 1 \(pid \d+\) answered nothing for 5 s, so it was stopped"):
        ProcessPool(Toy, [("a",), ("b", False, True)], "Toy worker", stall_seconds=5.0)  # a start that hangs
