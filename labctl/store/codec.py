"""Events to JSON and back (the spool journal keeps events, not rows)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from labctl.engine import events as ev

_KINDS: dict[str, type[ev.Event]] = {
    cls.__name__: cls
    for cls in vars(ev).values()
    if isinstance(cls, type) and issubclass(cls, ev.Event) and cls is not ev.Event
}
_TUPLE_FIELDS = {"tags", "choices"}
_ENUM_FIELDS: dict[str, Any] = {"verdict": ev.Verdict}


def event_to_json(event: ev.Event) -> str:
    return json.dumps(event.to_dict(), default=str, separators=(",", ":"))


def event_from_json(text: str) -> ev.Event:
    data: dict[str, Any] = json.loads(text)
    kind = data.pop("event")
    cls = _KINDS.get(kind)
    if cls is None:
        raise ValueError(f"unknown event kind {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    data = {k: v for k, v in data.items() if k in names}  # tolerate fields added later
    if data.get("limits") is not None:
        data["limits"] = ev.Limits(**data["limits"])
    if "instruments" in data:
        data["instruments"] = [ev.InstrumentInfo(**i) for i in data["instruments"]]
    for key in _TUPLE_FIELDS & data.keys():
        data[key] = tuple(data[key])
    if "verdict" in data:
        data["verdict"] = ev.Verdict(data["verdict"])
    if "outcome" in data:
        enum = ev.StepOutcome if cls is ev.StepEnded else ev.RunOutcome
        data["outcome"] = enum(data["outcome"])
    return cls(**data)
