"""The OCP export stamps each line ocptv writes with the recorded time: as text where the line
allows it, and the line is exactly what parsing and writing it again gives."""

from __future__ import annotations

import io
import json

import pytest

from labctl.report.json_export import iso_utc
from labctl.report.ocp import _Writer


def reparsed(buffer: str, at: float) -> str:
    line = json.loads(buffer)
    line["timestamp"] = iso_utc(at)
    return json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n"


@pytest.mark.parametrize("artifact", [
    {"testStepArtifact": {"measurement": {"name": "vdd", "value": 0.75, "unit": "V"}, "testStepId": "3"}},
    {"testStepArtifact": {"log": {"severity": "INFO", "message": "limit 0.7 V \u2264 x \u2264 0.8 V"}}},
    {"testStepArtifact": {"log": {"severity": "INFO", "message": "a reply \x1b[2J \"quoted\" \\ back"}}},
    {"testRunArtifact": {"log": {"message": "\"timestamp\": \"no\"}"}, "metadata": {"timestamp": "x"}}},
    {"testStepArtifact": {"measurement": {"name": "big", "value": 1e300, "unit": ""}}},
])
def test_each_line_is_the_reparsed_line_with_the_recorded_time(artifact):
    buffer = json.dumps({**artifact, "sequenceNumber": 7, "timestamp": "2030-01-01T00:00:00.000000Z"})
    out = io.StringIO()
    writer = _Writer(out)
    writer.at = 1764489601.25
    writer.write(buffer)
    assert out.getvalue() == reparsed(buffer, writer.at)
    assert json.loads(out.getvalue())["timestamp"] == "2025-11-30T08:00:01.250000Z"


def test_a_value_json_has_not_is_refused_as_before():
    writer = _Writer(io.StringIO())
    with pytest.raises(ValueError):
        writer.write(json.dumps({"testStepArtifact": {"measurement": {"value": float("nan")}},
                                 "sequenceNumber": 1, "timestamp": "x"}))
