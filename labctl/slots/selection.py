"""``--slots 1-4,7`` / ``--slots all`` and ``--dut SN1,SN2`` against a fixture's slots."""

from __future__ import annotations

from typing import Any

from labctl.errors import UsageError

MAX_SLOTS = 256


def select_slots(fixture: Any, text: str) -> list[str]:
    """The slot ids chosen, in the fixture's order of the text."""
    known = [s.id for s in fixture.slots]
    if not known:
        raise UsageError(f"--slots {text}: station {fixture.station} has no slots: section",
                         hint="use a fixture with slots (fixtures/sim-rack4.yaml, sim-rack.yaml) or drop --slots")
    text = text.strip()
    if text.lower() == "all":
        return known
    chosen: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise UsageError(f"--slots {text}: empty item", hint="write e.g. 1-4, 1,3,5 or all")
        if part in known:
            ids = [part]
        elif "-" in part:
            lo, _, hi = part.partition("-")
            if lo not in known or hi not in known:
                bad = lo if lo not in known else hi
                raise UsageError(f"--slots {text}: no slot {bad!r} in station {fixture.station}",
                                 hint=f"slots: {', '.join(known)}")
            i, j = known.index(lo), known.index(hi)
            if i > j:
                raise UsageError(f"--slots {text}: range {part} runs backwards", hint=f"write {hi}-{lo}")
            ids = known[i:j + 1]
        else:
            raise UsageError(f"--slots {text}: no slot {part!r} in station {fixture.station}",
                             hint=f"slots: {', '.join(known)}")
        for sid in ids:
            if sid in chosen:
                raise UsageError(f"--slots {text}: slot {sid} given twice")
            chosen.append(sid)
    if len(chosen) > MAX_SLOTS:
        raise UsageError(f"--slots {text}: {len(chosen)} slots, at most {MAX_SLOTS}")
    return chosen


def pair_duts(slots: list[str], dut: str | None) -> dict[str, str | None]:
    """Slot -> expected DUT serial (None: read from the slot's console)."""
    if not dut:
        return {s: None for s in slots}
    serials = [d.strip() for d in dut.split(",")]
    if any(not d for d in serials):
        raise UsageError(f"--dut {dut}: empty serial", hint="write SN1,SN2,… one per slot")
    if len(serials) != len(slots):
        raise UsageError(f"--dut gives {len(serials)} serial(s) for {len(slots)} slot(s) ({', '.join(slots)})",
                         hint="give one serial per slot, in slot order, or omit --dut to read each slot's console")
    if len(set(serials)) != len(serials):
        raise UsageError(f"--dut {dut}: a serial is given twice", hint="each board has its own serial")
    return dict(zip(slots, serials, strict=True))
