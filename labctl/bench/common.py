"""What the benchmarks share: a served simulated lab, plan files, timed subprocesses."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: the 100,000-step plan of the loading rows is genuine: raise the hostile-input limits for it
#: (the default limits admit 10,000 steps; the other rows run with them)
BIG_PLAN_ENV = {"LABCTL_MAX_FILE_BYTES": str(64 << 20), "LABCTL_MAX_YAML_NODES": str(10_000_000),
                "LABCTL_MAX_EXPANDED_STEPS": str(1_000_000)}


def env(*, big: bool = True, **extra: str) -> dict[str, str]:
    """This process's environment for a child; ``big``: with :data:`BIG_PLAN_ENV`, else with
    the default limits whatever this environment says."""
    out = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")
           and (big or not k.startswith("LABCTL_MAX"))}
    if big:
        out.update(BIG_PLAN_ENV)
    out.update(extra)
    return out


@contextlib.contextmanager
def private_plan_cache(folder: Path | str) -> Iterator[None]:
    """Inside the block, this process and the labctl it starts keep large plans' data in
    ``folder`` (``labctl.plan.cache``; ``off``: in none), whatever the user's cache holds."""
    from labctl.plan.cache import ENV

    saved = os.environ.get(ENV)
    os.environ[ENV] = str(folder)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = saved


def run_started(run_id: str) -> Any:
    """The ``RunStarted`` event of a benchmark that publishes straight into a recorder."""
    import socket

    from labctl.engine import events as ev

    return ev.RunStarted(
        run_id=run_id, time=time.time(), plan_name="bench", plan_version="1", plan_hash="0" * 64,
        plan_text="", plan_path="bench", station="bench", dut_serial="BENCH", operator=None,
        labctl_version="0", host=socket.gethostname(), pid=os.getpid())


def measure_plan(path: Path, steps: int, *, role: str = "psu", prop: str = "ch1.voltage") -> Path:
    """A plan of ``steps`` ``measure`` steps, each with limits."""
    lines = ["name: bench-measure", 'version: "1"', "steps:"]
    for i in range(steps):
        lines.append(f"  - {{id: m{i}, check: measure, args: {{role: {role}, property: {prop}}}, "
                     "limits: {value: {min: -1 V, max: 30 V}}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def corners_plan(path: Path, steps: int, per_axis: int = 10) -> Path:
    """A plan whose ``steps`` steps expand over 2 axes of ``per_axis`` values each."""
    lines = ["name: bench-corners", 'version: "1"', "corners:",
             f"  vin: [{', '.join(f'{4 + i * 0.1:.1f} V' for i in range(per_axis))}]",
             f"  temp: [{', '.join(f'{20 + i} degC' for i in range(per_axis))}]", "steps:"]
    for i in range(steps):
        lines.append(f"  - {{id: c{i}, check: measure, args: {{role: psu, property: ch1.voltage}}, "
                     "limits: {value: {max: 30 V}}}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def includes_plan(path: Path, steps: int, per_library: int = 100) -> Path:
    """A plan of ``steps`` steps built from one library of ``per_library`` steps, included
    ``steps // per_library`` times with a prefix each (a sweep written as a library)."""
    lib = path.with_name(path.stem + "-lib.yaml")
    lines = ["steps:"]
    for i in range(per_library):
        lines.append(f"  - {{id: s{i}, check: measure, args: {{role: psu, property: ch1.voltage}}, "
                     "limits: {value: {min: -1 V, max: 30 V}}}")
    lib.write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = ["name: bench-includes", 'version: "1"', "steps:"]
    lines += [f"  - {{include: {lib.name}, prefix: p{k}_}}" for k in range(steps // per_library)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def timed_cli(*args: str, extra_env: dict[str, str] | None = None, timeout: float = 600,
              big: bool = True) -> tuple[float, int, str]:
    """(wall seconds, exit code, output) of ``python -m labctl ARGS``."""
    wall, _cpu, code, out = timed_cli_cpu(*args, extra_env=extra_env, timeout=timeout, big=big)
    return wall, code, out


def timed_cli_cpu(*args: str, extra_env: dict[str, str] | None = None, timeout: float = 600,
                  big: bool = True) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds of the child, exit code, output) of ``python -m labctl ARGS``.

    CPU time (user + system, every thread) is what labctl itself costs, whatever else the
    machine is doing; wall time includes waiting for instruments and for other processes."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "labctl", *args], capture_output=True, text=True,
                          env=env(big=big, **(extra_env or {})), timeout=timeout)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stdout + proc.stderr


def best(fn, repeat: int = 3) -> float:  # noqa: ANN001
    """The fastest of ``repeat`` runs of ``fn()`` (seconds): noise only ever adds time."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def placement() -> tuple[set[int], set[int]]:
    """(client CPUs, server CPUs): one CPU each where there are two or more (the simulated
    lab and the echo floor on one, the client measuring them on the other).

    Left to the scheduler, a loopback round trip on this 2-vCPU VM takes either about 22 µs
    (client and server on one CPU) or about 50 µs (on two), and the placement changes from
    one second to the next, so a floor and a figure measured moments apart could each catch
    either. With the client on one CPU and every server on another, all of them cross CPUs
    every time, the way a client and a separate instrument do."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(), set()
    if len(cpus) < 2:
        return set(cpus), set(cpus)
    return {cpus[0]}, {cpus[1]}


def current_cpus() -> set[int]:
    """The CPUs this thread may run on now (to restore after :func:`pin`)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set()


def pin(cpus: set[int]) -> None:
    """Run this thread (and the processes it starts from now on) on ``cpus`` only."""
    if cpus:
        with contextlib.suppress(AttributeError, OSError):
            os.sched_setaffinity(0, cpus)


@contextlib.contextmanager
def served_apart(fixture: Path) -> Iterator[None]:
    """``labctl sim serve`` of ``fixture`` on one CPU and this thread (with what it starts from
    here on) on another, as :func:`placement` says; every CPU again afterwards."""
    from labctl.sim.testing import served_lab

    client, lab = placement()
    everywhere = current_cpus()
    pin(lab)  # the served lab inherits it
    try:
        with served_lab(fixture):
            pin(client)
            yield
    finally:
        pin(everywhere)  # what runs next runs where it likes
