"""How `labctl runs` writes a duration: never `1m60.0s`, and a clock set back shows as a small
negative duration, not as `-1h59m57s`."""

from __future__ import annotations

import pytest

from labctl.cli.runs import _dur


@pytest.mark.parametrize(("seconds", "text"), [
    (None, "-"), (0.04, "0.0s"), (42.12, "42.1s"), (59.96, "1m00.0s"), (119.96, "2m00.0s"), (125.3, "2m05.3s"),
    (3599.4, "59m59.4s"), (3599.97, "1h00m00s"), (3725, "1h02m05s"), (-2.5, "-2.5s"), (-125.3, "-2m05.3s"),
])
def test_duration_text(seconds, text):
    assert _dur(seconds) == text
