"""``--slots`` and ``--dut`` as an operator writes them."""

from __future__ import annotations

import pytest

from labctl.errors import UsageError
from labctl.fixture.model import Fixture, Slot
from labctl.slots.selection import pair_duts, select_slots

RACK = Fixture(station="rack", slots=[Slot(id=str(k)) for k in range(1, 9)])


@pytest.mark.parametrize("text, ids", [
    ("all", [str(k) for k in range(1, 9)]),
    ("1-4", ["1", "2", "3", "4"]),
    ("2,5-6,8", ["2", "5", "6", "8"]),
    (" 3 ", ["3"]),
])
def test_selections(text, ids):
    assert select_slots(RACK, text) == ids


@pytest.mark.parametrize("text, message", [
    ("9", "no slot '9'"), ("1-9", "no slot '9'"), ("4-2", "runs backwards"), ("1,1", "given twice"),
    ("1,,2", "empty item"),
])
def test_bad_selections(text, message):
    with pytest.raises(UsageError, match=message):
        select_slots(RACK, text)


def test_a_fixture_without_slots():
    with pytest.raises(UsageError, match="has no slots"):
        select_slots(Fixture(station="bench"), "all")


def test_duts_pair_with_slots_in_order():
    assert pair_duts(["1", "2"], "SN1, SN2") == {"1": "SN1", "2": "SN2"}
    assert pair_duts(["1", "2"], None) == {"1": None, "2": None}
    with pytest.raises(UsageError, match="1 serial"):
        pair_duts(["1", "2"], "SN1")
    with pytest.raises(UsageError, match="twice"):
        pair_duts(["1", "2"], "SN1,SN1")
