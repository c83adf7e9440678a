"""Is the owner of a run alive? (the kernel's answer, pid reuse told apart)."""

from __future__ import annotations

import os
import subprocess
import time

from labctl.store.owner import process_alive, process_token


def test_this_process_is_alive_with_its_token():
    assert process_alive(os.getpid(), process_token(os.getpid()))
    assert process_token(os.getpid()) != ""


def test_a_reused_pid_is_not_the_owner():
    assert not process_alive(os.getpid(), "1")


def test_a_finished_child_is_dead_even_before_it_is_reaped():
    child = subprocess.Popen(["true"])
    token = process_token(child.pid)
    deadline = time.monotonic() + 30
    while process_alive(child.pid, token) and time.monotonic() < deadline:
        time.sleep(0.01)  # it exits and becomes a zombie: still in /proc, but dead
    assert not process_alive(child.pid, token)
    child.wait()
    assert not process_alive(child.pid, token)


def test_nonsense_pids_are_dead():
    assert not process_alive(0) and not process_alive(-5)
