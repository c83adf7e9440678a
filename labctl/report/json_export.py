"""The run records as JSON: ``{"schema": "labctl.run-record", "schema_version": "1", "runs": [...]}``.

The form is described by the JSON Schema ``docs/schema/run-record.v1.json``
(:mod:`labctl.report.schema`; ``labctl schema run-record`` prints it). Times are RFC 3339 UTC strings (``2026-11-30T08:00:00.123456Z``); durations are
seconds. Attachments are listed with size and SHA-256 (their content stays in the store).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from labctl import __version__
from labctl.report.formats import ExportOptions
from labctl.report.record import SCHEMA_VERSION, RunRecord

SCHEMA_NAME = "labctl.run-record"
_TIME_FIELDS = frozenset({"started_at", "ended_at", "asked_at", "answered_at", "time"})
_LEFT_OUT = frozenset({"content"})  # attachment bytes


def iso_utc(t: float | None) -> str | None:
    """Epoch seconds -> ``2026-11-30T08:00:00.123456Z``."""
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def plain(obj: Any, name: str = "") -> Any:
    """A record (or any part of it) as JSON-ready values: times as RFC 3339 strings."""
    if dataclasses.is_dataclass(obj):
        return {f.name: plain(getattr(obj, f.name), f.name) for f in dataclasses.fields(obj)
                if f.name not in _LEFT_OUT}
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, tuple | list):
        return [plain(v) for v in obj]
    if name in _TIME_FIELDS:
        return iso_utc(obj)
    return obj


def record_json(rec: RunRecord) -> dict[str, Any]:
    """One run as its JSON object: the record's fields plus a ``summary`` of the counts."""
    out = plain(rec)
    out["duration"] = rec.duration
    out["summary"] = {"steps": rec.step_counts(), "measurements": rec.verdict_counts()}
    return out


def document(records: Sequence[RunRecord]) -> dict[str, Any]:
    return {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "generator": f"labctl {__version__}",
        "exported_at": iso_utc(datetime.now(UTC).timestamp()),
        "runs": [record_json(r) for r in records],
    }


def write_json(records: Sequence[RunRecord], path: Path, options: ExportOptions) -> None:
    text = json.dumps(document(records), indent=2, ensure_ascii=False, allow_nan=False)
    path.write_text(text + "\n", encoding="utf-8")

