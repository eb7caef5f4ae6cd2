"""The one worker pool (arena.engine.pool) on local processes: its protocol and its one failure path.

The Ray kind speaks the same protocol through Host.handle; tests/test_ray_training.py and
tests/test_ray_hardening.py run it on a local Ray instance (slow set)."""

import os
import signal

import pytest

from arena.engine.pool import FAILED, OK, REFUSED, Host, ProcessPool, open_pool
from arena.engine.procs import WorkerError
from league.errors import LeagueError


class Toy:
    """A service for the tests: answers, refuses, fails, or tells its pid."""

    def __init__(self, name: str, refuse_start: bool = False):
        if refuse_start:
            raise LeagueError("the toy's file is damaged.")
        self.name = name

    def echo(self, value):
        return self.name, value

    def pid(self) -> int:
        return os.getpid()

    def refuse(self):
        raise LeagueError("no room left on the toy's disk.")

    def crash(self):
        raise ValueError("a bug in the toy")


def test_calls_are_answered_in_order_and_the_first_answer_comes_back_first():
    with open_pool("processes", Toy, [("a",), ("b",)], "Toy worker") as pool:
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
    with open_pool("processes", Toy, [("a",)], "Toy worker") as pool:
        pid = pool.pids[0]
        pool.call(0, "refuse")
        with pytest.raises(WorkerError) as refused:
            pool.reply(0)
    assert str(refused.value) == f"Toy worker 0 (pid {pid}) stopped: no room left on the toy's disk"
    assert not refused.value.lost and refused.value.index == 0
    with open_pool("processes", Toy, [("a",)], "Toy worker") as pool:
        pool.call(0, "crash")
        with pytest.raises(WorkerError, match=r"(?s)Toy worker 0 \(pid \d+\) failed:\n.*ValueError: a bug in the toy"):
            pool.reply(0)


def test_a_worker_that_cannot_start_says_why_before_any_call():
    with pytest.raises(WorkerError, match=r"Toy worker 1 \(pid \d+\) stopped: the toy's file is damaged"):
        ProcessPool(Toy, [("a",), ("b", True)], "Toy worker")


def test_a_killed_worker_is_one_sentence_with_its_pid_and_signal_and_can_be_replaced():
    with open_pool("processes", Toy, [("a",), ("b",)], "Toy worker") as pool:
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
    with pytest.raises(ValueError, match="pool kind"):
        with open_pool("threads", Toy, [("a",)], "Toy worker"):
            pass
