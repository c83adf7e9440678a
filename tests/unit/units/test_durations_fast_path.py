"""Plain durations are read without the unit registry, with the registry's result and limits."""

from __future__ import annotations

import pytest

from labctl.errors import UnitError
from labctl.units import parse_duration, parse_quantity


@pytest.mark.parametrize("text", ["2 s", "500 ms", "1.5 min", "1 h", ".5 s", "2s", " 10 min ", "1000 h", "0 s"])
def test_plain_durations_read_as_the_registry_reads_them(text):
    assert parse_duration(text) == pytest.approx(parse_quantity(text, "time").to("s"))


def test_a_plain_duration_beyond_any_bench_is_still_refused():
    with pytest.raises(UnitError, match="beyond any bench"):
        parse_duration("87600 h")
