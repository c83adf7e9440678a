"""One instant reads the same in every export: a measurement's time and its run's start in the
CSV and Parquet match the JSON and OCP to the microsecond (a quality engineer joins a CSV to the
JSON record on them)."""

from __future__ import annotations

import csv
import dataclasses
import json

import pandas as pd

from labctl.report.formats import export
from tests.unit.report.records import measurement, record, step

# Epoch floats as the store holds them; pandas' float conversion put each 1 µs early.
STARTED = 1796204307.0814316  # 2026-12-02T09:38:27.081432Z
MEASURED = 1764000000.9999996  # 2025-11-24T16:00:01.000000Z


def _times_record():
    rec = record(step("rails", "PASS", measurement("VDD_CORE", 0.75, "V", "NONE", t=MEASURED)), outcome="passed")
    return dataclasses.replace(rec, started_at=STARTED, ended_at=STARTED + 2)


def test_csv_and_parquet_times_match_the_json_to_the_microsecond(tmp_path):
    rec = _times_record()
    doc = json.loads(export([rec], "json", tmp_path / "r.json").read_text())
    run = doc["runs"][0]
    assert run["started_at"] == "2026-12-02T09:38:27.081432Z"
    assert run["steps"][0]["measurements"][0]["time"] == "2025-11-24T16:00:01.000000Z"

    [row] = list(csv.DictReader(export([rec], "csv", tmp_path / "r.csv").open(encoding="utf-8")))
    assert (row["run_started"], row["time"]) == ("2026-12-02T09:38:27.081432Z", "2025-11-24T16:00:01.000000Z")

    table = pd.read_parquet(export([rec], "parquet", tmp_path / "r.parquet"))
    assert table["run_started"][0] == pd.Timestamp("2026-12-02T09:38:27.081432Z")
    assert table["time"][0] == pd.Timestamp("2025-11-24T16:00:01Z")

