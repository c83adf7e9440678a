"""The run records as JSON: ``{"schema": "labctl.run-record", "schema_version": "1", "runs": [...]}``.

The form is described by the JSON Schema ``docs/schema/run-record.v1.json``
(:mod:`labctl.report.schema`; ``labctl schema run-record`` prints it). Times are RFC 3339 UTC strings (``2026-11-30T08:00:00.123456Z``); durations are
seconds. Attachments are listed with size and SHA-256 (their content stays in the store).

The file is written as it is made, a step at a time (a run of 100,000 steps never exists whole
as text or as one tree of JSON values). The document, each run and each step are laid out a
key per line, indented by two; a list of objects (steps, measurements, samples, sessions,
logs …) an element per line; every other value (a measurement, a sample, the plan, a summary)
is one line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from labctl import __version__
from labctl.jsonlayout import Laid, Part, write
from labctl.report.formats import ExportOptions
from labctl.report.record import SCHEMA_VERSION, RunRecord

SCHEMA_NAME = "labctl.run-record"
_TIME_FIELDS = frozenset({"started_at", "ended_at", "asked_at", "answered_at", "time"})
_LEFT_OUT = frozenset({"content"})  # attachment bytes
_SCALARS = (str, int, float, bool, type(None))
_FIELDS: dict[type, tuple[str, ...]] = {}  # dataclass -> the names of its exported fields
_ENCODE = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode  # one line, C speed
_STRING = json.encoder.encode_basestring  # a str as JSON (non-ASCII kept, as _ENCODE does)


def iso_utc(t: float | None) -> str | None:
    """Epoch seconds -> ``2026-11-30T08:00:00.123456Z``."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _LEFT_OUT)
    return names


def plain(obj: Any, name: str = "") -> Any:
    """A record (or any part of it) as JSON-ready values: times as RFC 3339 strings."""
    if isinstance(obj, _SCALARS):
        return iso_utc(obj) if name in _TIME_FIELDS else obj
    if dataclasses.is_dataclass(obj):
        return {f: plain(getattr(obj, f), f) for f in _fields(type(obj))}
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, tuple | list):
        return [plain(v) for v in obj]
    return obj


def _summary(rec: RunRecord) -> dict[str, Any]:
    return {"steps": rec.step_counts(), "measurements": rec.verdict_counts()}


def record_json(rec: RunRecord) -> dict[str, Any]:
    """One run as its JSON object: the record's fields plus a ``summary`` of the counts."""
    out = plain(rec)
    out["duration"] = rec.duration
    out["summary"] = _summary(rec)
    return out


def _header() -> dict[str, Any]:
    return {"schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION, "generator": f"labctl {__version__}",
            "exported_at": iso_utc(datetime.now(UTC).timestamp())}


def document(records: Sequence[RunRecord]) -> dict[str, Any]:
    """The whole document as one value (what :func:`write_json` writes, for small sets of runs)."""
    return {**_header(), "runs": [record_json(r) for r in records]}


# -- writing, a part at a time (labctl.jsonlayout) --------------------------------------------
def _text(value: Any, name: str) -> str:
    """One value as JSON text (a string, a number, null at once; anything else through :func:`plain`)."""
    kind = type(value)
    if kind is str and name not in _TIME_FIELDS:
        return _STRING(value)
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    return _ENCODE(plain(value, name))


class _Step(Part):
    """A step as the lines of its object: a key per line, a measurement or a sample per line
    (made from the record's fields, without the tree of values :func:`plain` would build)."""

    __slots__ = ("step",)

    def __init__(self, step: Any) -> None:
        self.step = step

    def json_text(self, pad: str) -> str:
        step, inner = self.step, pad + "  "
        lines = []
        for name in _fields(type(step)):
            value = getattr(step, name)
            if type(value) is tuple and value and dataclasses.is_dataclass(value[0]):
                items = f",\n{inner}  ".join([_ENCODE(plain(item)) for item in value])
                lines.append(f"{inner}{_STRING(name)}: [\n{inner}  {items}\n{inner}]")
            else:
                lines.append(f"{inner}{_STRING(name)}: {_text(value, name)}")
        return "{\n" + ",\n".join(lines) + f"\n{pad}}}"


def _run_parts(rec: RunRecord) -> Laid:
    """A run's keys in the order :func:`record_json` gives them, its steps made one by one."""
    out = Laid()
    for f in _fields(type(rec)):
        value = getattr(rec, f)
        out[f] = map(_Step, value) if f == "steps" else plain(value, f)
    out["duration"] = rec.duration
    out["summary"] = _summary(rec)
    return out


def write_json(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    """The document, written a step at a time."""
    with path.open("w", encoding="utf-8", newline="\n") as out:
        write(out.write, Laid({**_header(), "runs": map(_run_parts, records)}), _ENCODE)
        out.write("\n")
