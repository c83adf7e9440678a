"""The JSON Schema (draft 2020-12) of the run records' JSON form (:mod:`labctl.report.json_export`).

``labctl schema run-record`` prints it; the committed copy is ``docs/schema/run-record.v1.json``.
A change to the record that a reader would notice gets a new ``schema_version``.
"""

from __future__ import annotations

from typing import Any

from labctl.report.record import SCHEMA_VERSION

_TIME = {"type": "string", "format": "date-time"}
_TIME_OR_NULL = {"type": ["string", "null"], "format": "date-time"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_STR_OR_NULL = {"type": ["string", "null"]}
_INT = {"type": "integer"}
_STR = {"type": "string"}
_STEP_OUTCOMES = ["PASS", "FAIL", "ERROR", "SKIPPED", "ABORTED", "INTERRUPTED"]
_RUN_OUTCOMES = ["running", "passed", "failed", "error", "aborted", "interrupted"]


def _with(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


def _obj(description: str, **props: tuple[dict[str, Any], str]) -> dict[str, Any]:
    """An object whose every property is required and nothing else is allowed."""
    return {
        "type": "object",
        "description": description,
        "properties": {k: _with(s, d) for k, (s, d) in props.items()},
        "required": list(props),
        "additionalProperties": False,
    }


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/$defs/{name}"}


def _list(name: str) -> dict[str, Any]:
    return {"type": "array", "items": _ref(name)}


def _counts(description: str) -> dict[str, Any]:
    return {"type": "object", "description": description, "additionalProperties": {"type": "integer", "minimum": 0}}


def run_record_schema() -> dict[str, Any]:
    session_ref = (_INT, "the session that recorded it: 0 the original run, 1.. a resume")
    step_ref = (_STR_OR_NULL, "key of the step it belongs to (null: the run as a whole)")
    defs = {
        "limits": _obj(
            "A measurement's limits, in the measurement's unit",
            low=(_NUM_OR_NULL, "lowest passing value"), high=(_NUM_OR_NULL, "highest passing value"),
            nominal=(_NUM_OR_NULL, "the expected value"),
            marginal_low=(_NUM_OR_NULL, "values in [low, marginal_low) pass as MARGINAL"),
            marginal_high=(_NUM_OR_NULL, "values in (marginal_high, high] pass as MARGINAL"),
            equals=({}, "the expected value of an equality limit (any JSON value; null: none)"),
            regex=(_STR_OR_NULL, "a regular expression the value must match"),
            text=(_STR, "the limits as they were judged, in words, e.g. \"0.7275 V ≤ x ≤ 0.7725 V\""),
        ),
    }
    defs["measurement"] = _obj(
        "One recorded measurement and its verdict",
        name=(_STR, "what was measured, e.g. VDD_CORE"),
        value=(_NUM_OR_NULL, "the numeric value (booleans as 0/1); null when not a finite number"),
        value_text=(_STR_OR_NULL, "the value as text when it is not a finite number"),
        unit=(_STR, "unit of value and limits (\"\" for a count)"),
        limits=({"anyOf": [_ref("limits"), {"type": "null"}]}, "null: recorded without limits"),
        verdict=({"enum": ["PASS", "MARGINAL", "FAIL", "NONE"]},
                 "MARGINAL passes inside the marginal band; NONE: no limits"),
        labels=({"type": "object", "additionalProperties": {"type": ["string", "number", "boolean"]}},
                "what the value belongs to: lane, rail, channel, sensor …"),
        time=(_TIME, "when it was recorded (wall clock, UTC)"),
        seq=(_INT, "order within the step"),
    )
    defs["sample"] = _obj(
        "One point of a time series recorded during a step",
        series=(_STR, "the series, e.g. chamber_temp"), value=({"type": "number"}, "the value"),
        unit=(_STR, "its unit"), time=(_TIME, "when (wall clock, UTC)"),
    )
    defs["step"] = _obj(
        "One attempt of one step at one corner",
        step_key=(_STR, "group/step_id[@corner_index]#attempt, unique within a session"),
        step_id=(_STR, "the step's id in the plan"),
        group=({"enum": ["setup", "steps", "teardown"]}, "the plan section"),
        check=(_STR, "the check it ran (safe_state: the teardown's safe state of a role)"),
        corner=({"type": "object"}, "the corner's values ({} outside corners)"),
        corner_index=({"type": ["integer", "null"]}, "index of the corner in the plan's corners"),
        attempt=({"type": "integer", "minimum": 1}, "1 for the first try, 2.. for retries and re-runs"),
        session=session_ref,
        tags=({"type": "array", "items": _STR}, "the step's tags"),
        started_at=(_TIME, "start (UTC)"), ended_at=(_TIME_OR_NULL, "end (UTC); null: never ended"),
        duration=(_NUM_OR_NULL, "wall-clock seconds"),
        duration_sim=(_NUM_OR_NULL, "simulated seconds, on a time-scaled simulated bench"),
        outcome=({"enum": [*_STEP_OUTCOMES, None]}, "null: never ended (the run was cut off in it, or is still in it)"),
        message=(_STR, "why it failed, errored or was skipped"),
        final=({"type": "boolean"}, "true for the attempt that counts for the step's verdict"),
        measurements=(_list("measurement"), "in the order recorded"),
        samples=(_list("sample"), "in the order recorded"),
    )
    defs["session"] = _obj(
        "One process that wrote into the run (resumes add sessions)",
        index=(_INT, "0: the original run, 1..: resumes"),
        started_at=(_TIME, "start (UTC)"), ended_at=(_TIME_OR_NULL, "end (UTC)"),
        outcome=({"enum": [*_RUN_OUTCOMES, None]}, "how this session ended"),
        host=(_STR, "the host it ran on"), pid=(_INT, "its process id"),
        labctl_version=(_STR, "labctl's version"), plan_hash=(_STR, "sha256 of the plan text it ran"),
        plan_changed=({"type": "boolean"}, "resumed with --force on a changed plan"),
        plan_text=(_STR_OR_NULL, "the plan it ran when that differs from the run's"),
    )
    defs["instrument"] = _obj(
        "An instrument of the station, as identified when a session started",
        role=(_STR, "fixture role (psu, dmm, chamber, bert, dut …)"), driver=(_STR, "driver profile"),
        resource=(_STR, "VISA resource or serial device"), idn=(_STR, "its identity (*IDN?)"),
        asset_serial=(_STR_OR_NULL, "asset or serial number"),
        calibration_due=(_STR_OR_NULL, "calibration due date (ISO date)"), session=session_ref,
    )
    defs["prompt"] = _obj(
        "A question put to the operator and the answer",
        prompt_id=(_STR, "the prompt's id (the step id)"), text=(_STR, "the question"),
        choices=({"type": "array", "items": _STR}, "allowed answers ([]: free text)"),
        answer=(_STR_OR_NULL, "null: never answered"), answer_source=(_STR_OR_NULL, "who answered"),
        asked_at=(_TIME, "when asked"), answered_at=(_TIME_OR_NULL, "when answered"),
        step_key=step_ref, session=session_ref,
    )
    defs["instrument_error"] = _obj(
        "An entry of an instrument's error queue",
        role=(_STR, "the instrument's role"), code=(_INT, "SCPI error code"), message=(_STR, "its text"),
        time=(_TIME, "when read"), step_key=step_ref, session=session_ref,
    )
    defs["log_entry"] = _obj(
        "A line of the run's log (pre-flight notes, warnings, checks' notes)",
        level=(_STR, "debug, info, warning, error"), message=(_STR, "the text"), time=(_TIME, "when"),
        step_key=step_ref, session=session_ref,
    )
    defs["attachment"] = _obj(
        "A file a step attached (content kept in the store)",
        name=(_STR, "its name"), media_type=(_STR, "MIME type"), path=(_STR, "where it was written"),
        size=({"type": ["integer", "null"]}, "bytes"), sha256=(_STR_OR_NULL, "SHA-256 of the content"),
        time=(_TIME, "when attached"), step_key=step_ref, session=session_ref,
    )
    defs["plan"] = _obj(
        "The test plan the run executed",
        name=(_STR, "plan name"), version=(_STR, "plan version"), hash=(_STR, "sha256 of the plan text"),
        path=(_STR, "the file it was read from"), text=(_STR, "the plan's YAML text, as run"),
        parameters=({"type": "object"}, "parameters after overrides"),
        corners=({"type": "array", "items": {"type": "object"}}, "the corners, in order"),
    )
    defs["run"] = _obj(
        "One run: context, every step attempt with its measurements, and what else was recorded",
        run_id=(_STR, "the run's id"), outcome=({"enum": _RUN_OUTCOMES}, "the run's outcome"),
        message=(_STR, "why it failed, errored or was aborted"), plan=(_ref("plan"), "the plan"),
        station=(_STR, "the station (fixture) name"), slot=(_STR_OR_NULL, "the slot on a multi-slot station"),
        dut_serial=(_STR_OR_NULL, "the board's serial"), operator=(_STR_OR_NULL, "who ran it"),
        host=(_STR, "the host of the latest session"), labctl_version=(_STR, "labctl's version"),
        started_at=(_TIME, "start (UTC)"), ended_at=(_TIME_OR_NULL, "end (UTC); null while running"),
        resumed_from=(_STR_OR_NULL, "the run this one continues, if another"),
        sessions=(_list("session"), "the original session and each resume"),
        instruments=(_list("instrument"), "identities and calibration, per session"),
        steps=(_list("step"), "every attempt, in the order run"),
        prompts=(_list("prompt"), "operator prompts and answers"),
        instrument_errors=(_list("instrument_error"), "instrument error-queue entries"),
        logs=(_list("log_entry"), "the run's log"), attachments=(_list("attachment"), "attached files"),
        schema_version=({"const": SCHEMA_VERSION}, "version of this form"),
        duration=(_NUM_OR_NULL, "wall-clock seconds the run ran (a resumed run: its sessions together, not the time between them)"),
        summary=(_obj("Counts over the final attempts",
                      steps=(_counts("step outcome (RUNNING or INTERRUPTED for one that never ended) -> "
                                     "number of plan steps"), "plan steps (safe state left out)"),
                      measurements=(_counts("verdict -> number of measurements"), "measurements")),
                 "counts over the final attempts"),
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"labctl:run-record.v{SCHEMA_VERSION}.json",
        "title": "labctl run records",
        "description": "Runs exported by `labctl report --format json`: one object per run with its plan, "
                       "station, instruments, DUT, steps (every attempt), measurements with limits and "
                       "verdicts, samples, prompts, errors and attachments. Times are RFC 3339 UTC.",
        **{k: v for k, v in _obj(
            "The exported document",
            schema=({"const": "labctl.run-record"}, "names this form"),
            schema_version=({"const": SCHEMA_VERSION}, "version of this form"),
            generator=(_STR, "the labctl that wrote it"), exported_at=(_TIME, "when it was written"),
            runs=(_list("run"), "the runs, in the order selected"),
        ).items() if k != "description"},
        "$defs": defs,
    }
