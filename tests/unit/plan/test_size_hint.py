"""A plan over the file-size limit says in one hint every limit a file of its size needs, so
that a genuine long plan loads at the first retry (not after a size, then a values, then a
steps error)."""

from __future__ import annotations

import re

import pytest

from labctl.bench.common import measure_plan, private_plan_cache
from labctl.errors import LabctlError
from labctl.plan.loader import check_plan


def _check(plan, monkeypatch, limits: dict[str, str]):
    for name in ("LABCTL_MAX_FILE_BYTES", "LABCTL_MAX_YAML_NODES", "LABCTL_MAX_EXPANDED_STEPS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in limits.items():
        monkeypatch.setenv(name, value)
    with private_plan_cache("off"):
        try:
            return check_plan(plan)
        except LabctlError as err:  # a file error comes raised
            return None, [err]


@pytest.mark.parametrize("steps", [3000, 20000])
def test_following_the_size_hint_once_loads_the_plan(tmp_path, monkeypatch, steps):
    plan = measure_plan(tmp_path / "long.yaml", steps)  # ~116 bytes and ~17 values a step
    # limits scaled down (64 KiB, 4,000 values, 1,000 steps) so that the plans stand for long
    # plans over the real ones (4 MiB, 400,000, 100,000) without taking their time
    small = {"LABCTL_MAX_FILE_BYTES": "65536", "LABCTL_MAX_YAML_NODES": "4000", "LABCTL_MAX_EXPANDED_STEPS": "1000"}
    loaded, errors = _check(plan, monkeypatch, small)
    assert loaded is None and len(errors) == 1
    message = errors[0].format()
    assert "file too large" in message, message
    raised = dict(re.findall(r"(LABCTL_MAX_\w+)=(\d+)", errors[0].hint or ""))
    assert set(raised) == set(small), errors[0].hint
    assert int(raised["LABCTL_MAX_FILE_BYTES"]) >= plan.stat().st_size
    loaded, errors = _check(plan, monkeypatch, raised)
    assert not errors and loaded is not None, [e.format() for e in errors]
    assert len(loaded.plan.steps) == steps
