"""Plan loading: ``labctl validate`` of plans of growing size; linear growth and the 2 s mark.

These rows read every plan cold (``LABCTL_PLAN_CACHE=off``): the targets are a first read's. A
last row gives what a plan read again costs, its YAML data taken from ``labctl.plan.cache``."""

from __future__ import annotations

import time
from pathlib import Path

from labctl.bench import Row
from labctl.bench.common import (
    corners_plan,
    env,
    includes_plan,
    measure_plan,
    private_plan_cache,
    timed_cli,
)


def check_seconds(plan: Path) -> float:
    """Seconds to check ``plan`` inside this process (no interpreter start-up)."""
    import os

    from labctl.plan.loader import check_plan

    saved = {k: os.environ.get(k) for k in env()}
    os.environ.update({k: v for k, v in env().items() if k.startswith("LABCTL_MAX")})
    try:
        start = time.perf_counter()
        loaded, errors = check_plan(plan)
        seconds = time.perf_counter() - start
    finally:
        for k, v in saved.items():
            if k.startswith("LABCTL_MAX"):
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    if errors or loaded is None:
        raise RuntimeError(f"{plan}: {errors[:3]}")
    return seconds


def rows(tmp: Path, quick: bool) -> list[Row]:
    with private_plan_cache("off"):  # a first read, every time
        out = cold_rows(tmp, quick)
    return [*out, again_row(tmp, quick)]


def again_row(tmp: Path, quick: bool) -> Row:
    """Checking a plan read before (its YAML data from the plan cache) against its first read."""
    n = 1000 if quick else 10000
    plan = measure_plan(tmp / f"again-{n}.yaml", n)
    with private_plan_cache(tmp / "again-cache"):
        first = check_seconds(plan)
        again = min(check_seconds(plan) for _ in range(3))
    with private_plan_cache("off"):
        first = min(first, *(check_seconds(plan) for _ in range(2)))  # the best first read too
    return Row(f"load: a {n:,}-step plan read again (plan cache) vs its first read", "≤ 0.6×",
               f"{again * 1e6 / n:.0f} vs {first * 1e6 / n:.0f} µs a step", again / first / 0.6)


def cold_rows(tmp: Path, quick: bool) -> list[Row]:
    sizes = (100, 1000, 10000) if quick else (1000, 10000, 100000)
    check_seconds(measure_plan(tmp / "warm-up.yaml", 10))  # imports and the unit registry: paid once
    per_step = {}
    for n in sizes:  # the best of a few loads (fewer of the largest): noise only ever adds time
        plan_n = measure_plan(tmp / f"load-{n}.yaml", n)
        per_step[n] = min(check_seconds(plan_n) for _ in range(2 if n == sizes[-1] else 3)) / n
    small, mid, big = sizes
    growth = per_step[big] / min(per_step[small], per_step[mid])
    target_n = 1000 if quick else 10000
    plan = measure_plan(tmp / f"validate-{target_n}.yaml", target_n)
    corners = corners_plan(tmp / f"corners-{target_n}.yaml", target_n // 100)
    included = includes_plan(tmp / f"includes-{target_n}.yaml", target_n)
    wall = {"plan": float("inf"), "corners": float("inf"), "includes": float("inf")}
    for _round in range(1 if quick else 3):  # the best of 3, taking turns: a slow spell only ever adds time
        for name, path in (("plan", plan), ("corners", corners), ("includes", included)):
            seconds, code, out = timed_cli("validate", str(path), big=False)  # the default limits
            if code != 0:
                raise RuntimeError(f"labctl validate {path} exited {code}: {out[-1000:]}")
            wall[name] = min(wall[name], seconds)
    shown = ", ".join(f"{n:,}: {per_step[n] * 1e6:.0f} µs" for n in sizes)
    return [
        Row(f"load: time per step at {small:,}/{mid:,}/{big:,} steps", f"linear (per step at {big:,} ≤ 1.5× the least)",
            shown, growth / 1.5),
        Row(f"labctl validate, {target_n:,} steps (default limits)", "≤ 2 s", f"{wall['plan']:.2f} s", wall["plan"] / 2.0),
        Row(f"labctl validate, {target_n // 100} steps × 100 corners", "≤ 2 s", f"{wall['corners']:.2f} s",
            wall["corners"] / 2.0),
        Row(f"labctl validate, {target_n // 100} includes of one 100-step library", "≤ 2 s",
            f"{wall['includes']:.2f} s", wall["includes"] / 2.0),
    ]
