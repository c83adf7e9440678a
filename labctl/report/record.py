"""The run record: everything the store holds about one run, as one immutable, typed object.

Every exporter (JSON, CSV/Parquet/xlsx, JUnit, OCP, HTML) is a callable that takes a list of
:class:`RunRecord` and reads nothing else, so a report can be made of any stored run, from any
station, long after the fact::

    from labctl.report.record import load_records, measurements_frame
    records = load_records("results.db", filters=RunFilters(plan="power-rails", since="7d"))
    df = measurements_frame(records)          # one row per measurement, FRAME_COLUMNS

Records are built only from the store (never from a running engine's memory). Objects are
frozen dataclasses; sequences are tuples and mappings are read-only views.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from labctl.units import ran_seconds, run_duration

if TYPE_CHECKING:
    import pandas as pd

    from labctl.store.query import RunFilters
    from labctl.store.store import Store

SCHEMA_VERSION = "1"  # of the record and of its JSON form (docs/schema/run-record.v1.json)
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_CHUNK = 500  # run ids per IN (...) query
_FETCH = 5000  # rows fetched from the database at a time


def _ro(value: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(value)) if value else _EMPTY


def format_pairs(pairs: Mapping[str, Any] | None) -> str:
    """``{"vin": "5 V", "lane": 3}`` -> ``"vin=5 V, lane=3"`` (corners and labels as text)."""
    return ", ".join(f"{k}={v}" for k, v in (pairs or {}).items())


@dataclass(frozen=True, slots=True)
class Limits:
    """A measurement's limits in the measurement's unit; ``text`` is how the plan wrote them."""

    low: float | None = None
    high: float | None = None
    nominal: float | None = None
    marginal_low: float | None = None
    marginal_high: float | None = None
    equals: Any = None  # the expected value (any JSON value), for equality checks
    regex: str | None = None
    text: str = ""

    def describe(self) -> str:
        """The limits as a person reads them: the plan's text, else ``low..high``."""
        if self.text:
            return self.text
        if self.low is not None or self.high is not None:
            return f"{'' if self.low is None else f'{self.low:g}'}..{'' if self.high is None else f'{self.high:g}'}"
        if self.equals is not None:
            return f"== {json.dumps(self.equals)}"
        return f"~ /{self.regex}/" if self.regex else ""


@dataclass(frozen=True, slots=True)
class Measurement:
    name: str
    value: float | None  # numeric value (booleans as 0/1); None when not a number
    value_text: str | None  # the value as text when it is not a finite number
    unit: str
    limits: Limits | None
    verdict: str  # PASS | MARGINAL | FAIL | NONE (recorded without limits)
    labels: Mapping[str, str]  # lane, rail, channel, sensor … as the check recorded them
    time: float  # wall-clock epoch seconds
    seq: int  # order within the step

    @property
    def display_value(self) -> float | str | None:
        return self.value if self.value is not None else self.value_text


@dataclass(frozen=True, slots=True)
class Sample:
    series: str
    value: float
    unit: str
    time: float


@dataclass(frozen=True, slots=True)
class Step:
    """One attempt of one step (at one corner). ``final`` marks the attempt that counts."""

    step_key: str  # "steps/rails@1#2": group/id@corner#attempt, unique per session
    step_id: str
    group: str  # setup | steps | teardown
    check: str
    corner: Mapping[str, Any]  # the corner's values ({} outside corners)
    corner_index: int | None
    attempt: int
    session: int  # 0 = the original run, 1.. = resumes
    tags: tuple[str, ...]
    started_at: float
    ended_at: float | None
    duration: float | None  # wall seconds
    duration_sim: float | None  # simulated seconds, on a time-scaled simulated bench
    outcome: str | None  # PASS | FAIL | ERROR | SKIPPED | ABORTED | INTERRUPTED; None: never ended
    message: str
    final: bool
    measurements: tuple[Measurement, ...] = ()
    samples: tuple[Sample, ...] = ()

    @property
    def is_safe_state(self) -> bool:
        """The teardown's safe-state check of a role, not a step of the plan."""
        return self.check == "safe_state"

    @property
    def never_ran(self) -> bool:
        """Recorded without running: a step after an abort (ABORTED, ``not run: REASON``), not
        the step the abort cut short."""
        from labctl.engine.events import never_ran

        return never_ran(self.outcome, self.message)


@dataclass(frozen=True, slots=True)
class Session:
    """One process that wrote into the run: 0 is the original, 1.. are resumes."""

    index: int
    started_at: float
    ended_at: float | None
    outcome: str | None
    host: str
    pid: int
    labctl_version: str
    plan_hash: str
    plan_changed: bool  # resumed with --force on a changed plan
    plan_text: str | None  # the plan this session ran, when it differs from the run's


@dataclass(frozen=True, slots=True)
class Instrument:
    role: str
    driver: str
    resource: str
    idn: str
    asset_serial: str | None
    calibration_due: str | None  # ISO date
    session: int


@dataclass(frozen=True, slots=True)
class Prompt:
    prompt_id: str
    text: str
    choices: tuple[str, ...]
    answer: str | None
    answer_source: str | None  # operator, answers-file …
    asked_at: float
    answered_at: float | None
    step_key: str | None
    session: int


@dataclass(frozen=True, slots=True)
class InstrumentError:
    role: str
    code: int
    message: str
    time: float
    step_key: str | None
    session: int


@dataclass(frozen=True, slots=True)
class LogEntry:
    level: str
    message: str
    time: float
    step_key: str | None
    session: int


@dataclass(frozen=True, slots=True)
class Attachment:
    name: str
    media_type: str
    path: str
    size: int | None
    sha256: str | None
    time: float
    step_key: str | None
    session: int
    content: bytes | None = field(default=None, repr=False)  # loaded with attachment_content=True


@dataclass(frozen=True, slots=True)
class Plan:
    name: str
    version: str
    hash: str  # sha256 of the plan text
    path: str
    text: str
    parameters: Mapping[str, Any]
    corners: tuple[Mapping[str, Any], ...]

    def step_titles(self) -> Mapping[str, str]:
        """Step id -> its ``name:`` (the title a plan gives a step), read from the plan text as
        run: the plan's file and each file it included (a part that does not read is skipped)."""
        import hashlib

        digest = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).digest()
        titles = _TITLES.get(digest)
        if titles is None:
            titles = _step_titles(self.text)
            with _TITLES_LOCK:
                if len(_TITLES) >= _TITLES_KEPT:
                    del _TITLES[next(iter(_TITLES))]  # the oldest
                _TITLES[digest] = titles
        return titles


#: the step titles of the plan texts read last, by each text's SHA-256 (a long-lived process
#: keeps titles, never plan texts): `labctl stats` of 500 runs of one 200-step plan took 18.6 s
#: when each run's YAML was read again, 4.3 s with these
_TITLES: dict[bytes, Mapping[str, str]] = {}
_TITLES_KEPT = 64
_TITLES_LOCK = threading.Lock()


def _step_titles(text: str) -> Mapping[str, str]:
    """:meth:`Plan.step_titles` of a plan text (the plan's file, then each it included)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: dict[str, str] = {}
    for i, part in enumerate(text.split(_INCLUDED)):
        try:
            data = yaml.load(part.split("\n", 1)[1] if i else part, Loader=loader)  # noqa: S506 - a safe loader
        except (yaml.YAMLError, IndexError):
            continue
        if not isinstance(data, dict):
            continue
        for section in ("setup", "steps", "teardown"):
            for step in data.get(section) or []:
                if isinstance(step, dict) and isinstance(step.get("id"), str) and isinstance(step.get("name"), str):
                    out.setdefault(step["id"], step["name"])
    return MappingProxyType(out)  # shared by every run of the plan: read-only


#: what separates each included file in a run's plan text (labctl.engine.runner._plan_text)
_INCLUDED = "\n# ---- included: "


@dataclass(frozen=True, slots=True)
class RunRecord:
    run_id: str
    outcome: str  # running | passed | failed | error | aborted | interrupted
    message: str
    plan: Plan
    station: str
    slot: str | None
    dut_serial: str | None
    operator: str | None
    host: str
    labctl_version: str
    started_at: float
    ended_at: float | None
    resumed_from: str | None
    sessions: tuple[Session, ...]
    instruments: tuple[Instrument, ...]
    steps: tuple[Step, ...]  # every attempt, in the order they ran
    prompts: tuple[Prompt, ...]
    instrument_errors: tuple[InstrumentError, ...]
    logs: tuple[LogEntry, ...]
    attachments: tuple[Attachment, ...]
    schema_version: str = SCHEMA_VERSION

    @property
    def duration(self) -> float | None:
        """Seconds the run ran: its sessions' time together when it was resumed (the time
        between them is not counted), else from its start to its end."""
        spans = ((s.started_at, s.ended_at) for s in self.sessions)
        return run_duration(self.started_at, self.ended_at, len(self.sessions), ran_seconds(spans))

    @property
    def final_steps(self) -> tuple[Step, ...]:
        """The attempt that counts of each step, in run order."""
        return tuple(s for s in self.steps if s.final)

    def measurements(self, *, final_only: bool = True) -> Iterator[tuple[Step, Measurement]]:
        """Each measurement with its step (the final attempts only, unless told otherwise)."""
        for s in self.steps:
            if s.final or not final_only:
                for m in s.measurements:
                    yield s, m

    def plan_steps(self) -> tuple[Step, ...]:
        """The final attempts of the plan's steps (the teardown's safe-state checks left out)."""
        return tuple(s for s in self.steps if s.final and not s.is_safe_state)

    def outcome_of(self, step: Step) -> str:
        """The step's outcome; one that never ended is RUNNING while the run is, else INTERRUPTED."""
        return step.outcome or ("RUNNING" if self.outcome == "running" else "INTERRUPTED")

    def step_counts(self) -> dict[str, int]:
        """Outcome -> number of the plan's steps (final attempts) with it."""
        return dict(Counter(self.outcome_of(s) for s in self.plan_steps()))

    def verdict_counts(self) -> dict[str, int]:
        """Verdict -> number of measurements (final attempts) with it."""
        return dict(Counter(m.verdict for _, m in self.measurements()))

    @property
    def current_instruments(self) -> tuple[Instrument, ...]:
        """The instruments of the latest session that recorded any (what the run ended on)."""
        if not self.instruments:
            return ()
        last = max(i.session for i in self.instruments)
        return tuple(i for i in self.instruments if i.session == last)


# -- loading from the store ----------------------------------------------------------------------

def load_records(store_or_url: Store | str | None, run_ids: Sequence[str] | None = None,
                 filters: RunFilters | None = None, *, samples: bool = True,
                 attachment_content: bool = False) -> list[RunRecord]:
    """The records of the runs given by id (or unique id prefix) and/or matching ``filters``
    (both: the runs given that match). Runs given by id come in the order given; runs found by
    filters oldest first. ``store_or_url`` is an open :class:`Store`, or a ``--db`` value
    (None: ``$LABCTL_DB`` or the default file). Nothing matched: an empty list."""
    from labctl.store import open_store
    from labctl.store.store import Store

    if isinstance(store_or_url, Store):
        return _load(store_or_url, run_ids, filters, samples, attachment_content)
    with open_store(store_or_url, reading=True) as store:
        return _load(store, run_ids, filters, samples, attachment_content)


def _load(store: Store, run_ids: Sequence[str] | None, filters: RunFilters | None, with_samples: bool,
          attachment_content: bool) -> list[RunRecord]:
    from labctl.store import query

    ids = select_run_ids(store, run_ids, filters)
    if not ids:
        return []
    records: dict[str, RunRecord] = {}
    with store.read_engine.connect() as conn:
        if store.dialect == "postgresql":  # one snapshot for every query (SQLite's read transaction is one)
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start:start + _CHUNK]
            rows = _Rows(conn, chunk, query, with_samples, attachment_content)
            for rid in chunk:
                records[rid] = rows.record(rid)
    return [records[rid] for rid in ids]


def select_run_ids(store: Store, run_ids: Sequence[str] | None = None,
                   filters: RunFilters | None = None) -> list[str]:
    """The ids of the runs given (ids or unique prefixes) that match ``filters``; without ids,
    every run matching ``filters``, oldest first."""
    from sqlalchemy import select

    from labctl.store import query
    from labctl.store import schema as T

    wanted = filters or query.RunFilters()
    if run_ids:
        full = list(dict.fromkeys(query.find_run(store, r) for r in run_ids))
        if not wanted.any():
            return full
        q = wanted.where(select(T.runs.c.id).where(T.runs.c.id.in_(full)))
        with store.read_engine.connect() as conn:
            keep = set(conn.execute(q).scalars())
        return [r for r in full if r in keep]
    q = select(T.runs.c.id).order_by(T.runs.c.started_at, T.runs.c.id)
    if wanted.limit:  # the newest N, still listed oldest first
        q = select(T.runs.c.id).order_by(T.runs.c.started_at.desc(), T.runs.c.id.desc())
    with store.read_engine.connect() as conn:
        found = list(conn.execute(wanted.where(q)).scalars())
    return found[::-1] if wanted.limit else found


def _fetched(result: Any) -> Iterator[Any]:
    """A query's rows, fetched from the database :data:`_FETCH` at a time (as tuples: a
    SQLAlchemy row mapping each cost more than the row)."""
    return chain.from_iterable(result.partitions(_FETCH))


class _Rows:
    """The rows of a chunk of runs, one query per table, grouped by run."""

    def __init__(self, conn: Any, ids: list[str], query: Any, with_samples: bool, attachment_content: bool) -> None:
        from sqlalchemy import select

        from labctl.store import schema as T

        def grouped(q: Any) -> dict[str, list[dict[str, Any]]]:
            out: dict[str, list[dict[str, Any]]] = defaultdict(list)
            result = conn.execute(q)
            keys = list(result.keys())
            at = keys.index("run_id")
            for row in _fetched(result):
                out[row[at]].append(dict(zip(keys, row, strict=True)))
            return out

        def child(table: Any, *, skip: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
            cols = [c for c in table.c if c.name not in skip]
            # a full order, the same on every backend
            order = [table.c.session, *(table.c[k] for k in ("seq", "role") if k in table.c)]
            return grouped(select(*cols).where(table.c.run_id.in_(ids)).order_by(*order))

        self.runs = {r["id"]: r for r in (dict(x._mapping) for x in conn.execute(
            select(T.runs).where(T.runs.c.id.in_(ids))))}
        self.sessions = child(T.run_sessions)
        self.instruments = child(T.instruments)
        self.prompts = child(T.prompts)
        self.errors = child(T.instrument_errors)
        self.logs = child(T.logs)
        self.attachments = child(T.attachments, skip=() if attachment_content else ("content",))
        self.measurements: dict[int, list[Measurement]] = defaultdict(list)
        read = _MeasurementReader()
        # through steps: measurements are indexed by (step_ref, seq), not by run
        for r in _fetched(conn.execute(read.select(T).join(T.steps, T.measurements.c.step_ref == T.steps.c.id)
                                       .where(T.steps.c.run_id.in_(ids))
                                       .order_by(T.measurements.c.step_ref, T.measurements.c.seq))):
            ref, m = read(r)
            self.measurements[ref].append(m)
        self.samples: dict[int, list[Sample]] = defaultdict(list)
        if with_samples:
            for ref, series, value, unit, t in _fetched(conn.execute(  # (Row.t is SQLAlchemy's tuple accessor)
                    select(T.samples.c.step_ref, T.samples.c.series, T.samples.c.value, T.samples.c.unit, T.samples.c.t)
                    .where(T.samples.c.run_id.in_(ids)).order_by(T.samples.c.step_ref, T.samples.c.seq))):
                self.samples[ref].append(Sample(series, value, unit, t))
        # the steps last, each row made its Step as it comes (with its measurements and samples,
        # read above): a dict per row held for every step of a long run was most of the load's
        # peak memory (100,000 steps: about 100 MB)
        self.steps: dict[str, list[Step]] = defaultdict(list)
        s = T.steps.c
        measurements, samples = self.measurements, self.samples
        for (ref, run_id, step_key, step_id, group, check, corner, corner_index, attempt, session, tags, started_at,
             ended_at, duration, duration_sim, outcome, message, final) in _fetched(conn.execute(
                select(s.id, s.run_id, s.step_key, s.step_id, s.step_group, s.check_name, s.corner, s.corner_index,
                       s.attempt, s.session, s.tags, s.started_at, s.ended_at, s.duration, s.duration_sim,
                       s.outcome, s.message, query.final_step_clause().label("final"))
                .where(s.run_id.in_(ids)).order_by(s.session, s.seq))):
            self.steps[run_id].append(Step(
                step_key=step_key, step_id=step_id, group=group, check=check, corner=_ro(corner),
                corner_index=corner_index, attempt=attempt, session=session, tags=tuple(tags or ()),
                started_at=started_at, ended_at=ended_at, duration=duration, duration_sim=duration_sim,
                outcome=outcome, message=message, final=bool(final),
                measurements=tuple(measurements.pop(ref, ())), samples=tuple(samples.pop(ref, ()))))

    def record(self, rid: str) -> RunRecord:
        r = self.runs[rid]
        steps = tuple(self.steps.pop(rid, ()))
        return RunRecord(
            run_id=rid, outcome=r["outcome"], message=r["message"],
            plan=Plan(name=r["plan_name"], version=r["plan_version"], hash=r["plan_hash"], path=r["plan_path"],
                      text=r["plan_text"], parameters=_ro(r["parameters"]),
                      corners=tuple(_ro(c) for c in r["corners"] or ())),
            station=r["station"], slot=r["slot"], dut_serial=r["dut_serial"], operator=r["operator"],
            host=r["host"], labctl_version=r["labctl_version"], started_at=r["started_at"],
            ended_at=r["ended_at"], resumed_from=r["resumed_from"],
            sessions=tuple(Session(
                index=s["session"], started_at=s["started_at"], ended_at=s["ended_at"], outcome=s["outcome"],
                host=s["host"], pid=s["pid"], labctl_version=s["labctl_version"], plan_hash=s["plan_hash"],
                plan_changed=bool(s["plan_changed"]), plan_text=s["plan_text"],
            ) for s in self.sessions.get(rid, ())),
            instruments=tuple(Instrument(
                role=i["role"], driver=i["driver"], resource=i["resource"], idn=i["idn"],
                asset_serial=i["asset_serial"], calibration_due=i["calibration_due"], session=i["session"],
            ) for i in self.instruments.get(rid, ())),
            steps=steps,
            prompts=tuple(Prompt(
                prompt_id=p["prompt_id"], text=p["text"], choices=tuple(p["choices"] or ()), answer=p["answer"],
                answer_source=p["answer_source"], asked_at=p["t"], answered_at=p["answered_at"],
                step_key=p["step_key"], session=p["session"],
            ) for p in self.prompts.get(rid, ())),
            instrument_errors=tuple(InstrumentError(
                role=e["role"], code=e["code"], message=e["message"], time=e["t"], step_key=e["step_key"],
                session=e["session"],
            ) for e in self.errors.get(rid, ())),
            logs=tuple(LogEntry(level=x["level"], message=x["message"], time=x["t"], step_key=x["step_key"],
                                session=x["session"]) for x in self.logs.get(rid, ())),
            attachments=tuple(Attachment(
                name=a["name"], media_type=a["media_type"], path=a["path"], size=a["size"], sha256=a["sha256"],
                time=a["t"], step_key=a["step_key"], session=a["session"], content=a.get("content"),
            ) for a in self.attachments.get(rid, ())),
        )


class _MeasurementReader:
    """Measurement rows -> :class:`Measurement`. Limits and labels repeat across thousands of
    measurements: each distinct one is built once and shared (they are immutable)."""

    def __init__(self) -> None:
        self._limits: dict[tuple[Any, ...], Limits | None] = {}
        self._labels: dict[Any, Mapping[str, Any]] = {}

    @staticmethod
    def select(T: Any) -> Any:
        from sqlalchemy import Text, select, type_coerce

        m = T.measurements.c
        return select(m.step_ref, m.seq, m.name, m.value, m.value_text, m.unit, m.low, m.high, m.nominal,
                      m.marginal_low, m.marginal_high, m.limit_equals, m.limit_regex, m.limit_text, m.verdict,
                      type_coerce(m.labels, Text), m.t)

    def __call__(self, row: Any) -> tuple[int, Measurement]:
        ref, seq, name, value, value_text, unit, *lim, verdict, labels, t = row
        key = tuple(lim)
        limits = self._limits.get(key, _NO_LIMITS)
        if limits is _NO_LIMITS:
            low, high, nominal, marginal_low, marginal_high, equals, regex, text = key
            limits = self._limits[key] = None if all(v is None for v in key) else Limits(
                low=low, high=high, nominal=nominal, marginal_low=marginal_low, marginal_high=marginal_high,
                equals=json.loads(equals) if equals is not None else None, regex=regex, text=text or "")
        if labels is None:
            labs = _EMPTY
        else:  # JSON text (SQLite), or already decoded by the driver (PostgreSQL)
            lkey = labels if isinstance(labels, str) else json.dumps(labels, sort_keys=True)
            labs = self._labels.get(lkey)
            if labs is None:
                labs = self._labels[lkey] = _ro(json.loads(labels) if isinstance(labels, str) else labels)
        return ref, Measurement(name=name, value=value, value_text=value_text, unit=unit, limits=limits,
                                verdict=verdict, labels=labs, time=t, seq=seq)


_NO_LIMITS = Limits()  # also "not seen yet" in the reader's cache


# -- the measurements table --------------------------------------------------------------------

# One row per measurement; the documented columns of CSV, Parquet and xlsx (docs/reports.md).
FRAME_COLUMNS: tuple[str, ...] = (
    "run_id", "run_outcome", "run_started", "plan", "plan_version", "plan_hash", "station", "slot", "dut",
    "operator", "session", "step", "step_key", "group", "check", "corner", "corner_index", "attempt", "final",
    "step_outcome", "measurement", "labels", "lane", "rail", "channel", "sensor", "value", "value_text", "unit",
    "low", "high", "nominal", "marginal_low", "marginal_high", "limits", "verdict", "time",
)
_TIME_COLUMNS = ("run_started", "time")
_FLOAT_COLUMNS = ("value", "low", "high", "nominal", "marginal_low", "marginal_high")


_CONTEXT_WIDTH = 20  # run (10) and step (10) columns, the same for every measurement of a step


def _frame_columns(records: Iterable[RunRecord], final_only: bool) -> tuple[list[tuple[Any, ...]], list[int],
                                                                             list[list[Any]]]:
    """The frame's data column-wise: one context tuple per step (run and step columns), the
    step index of each measurement, and one list per measurement column (times as epoch)."""
    text: dict[int, str] = {}  # id of a (shared, immutable) labels or limits object -> its text
    contexts: list[tuple[Any, ...]] = []
    owner: list[int] = []
    cols: list[list[Any]] = [[] for _ in range(len(FRAME_COLUMNS) - _CONTEXT_WIDTH)]
    (name, labels, lane, rail, channel, sensor, value, value_text, unit, low, high, nominal, marg_low, marg_high,
     limits, verdict, when) = (c.append for c in cols)  # bound once: a million measurements pass here
    for rec in records:
        run = (rec.run_id, rec.outcome, rec.started_at, rec.plan.name, rec.plan.version, rec.plan.hash,
               rec.station, rec.slot, rec.dut_serial, rec.operator)
        for s in rec.steps:
            if not (s.final or not final_only) or not s.measurements:
                continue
            contexts.append((*run, s.session, s.step_id, s.step_key, s.group, s.check, format_pairs(s.corner),
                             s.corner_index, s.attempt, s.final, s.outcome))
            owner.extend([len(contexts) - 1] * len(s.measurements))
            for m in s.measurements:
                lim = m.limits or _NO_LIMITS
                lab = m.labels
                lab_text = text.get(id(lab))
                if lab_text is None:
                    lab_text = text[id(lab)] = format_pairs(lab)
                lim_text = text.get(id(lim))
                if lim_text is None:
                    lim_text = text[id(lim)] = lim.describe()
                name(m.name)
                labels(lab_text)
                lane(lab.get("lane"))
                rail(lab.get("rail"))
                channel(lab.get("channel"))
                sensor(lab.get("sensor"))
                value(m.value)
                value_text(m.value_text)
                unit(m.unit)
                low(lim.low)
                high(lim.high)
                nominal(lim.nominal)
                marg_low(lim.marginal_low)
                marg_high(lim.marginal_high)
                limits(lim_text)
                verdict(m.verdict)
                when(m.time)
    return contexts, owner, cols


def utc_times(seconds: Any) -> pd.DatetimeIndex:
    """Epoch seconds (NaN: none) as UTC timestamps, rounded to the microsecond as the JSON and
    OCP exports write them (``iso_utc``, Python's own rounding). pandas' conversion of float
    seconds truncates: about half the times of a CSV were 1 µs earlier than in the JSON."""
    import numpy as np
    import pandas as pd

    t = np.asarray(seconds, dtype="float64")
    whole = np.floor(t)
    return pd.to_datetime(whole * 1e6 + np.rint((t - whole) * 1e6), unit="us", utc=True)  # exact: < 2**53 µs


def measurements_frame(records: Iterable[RunRecord], *, final_only: bool = True) -> pd.DataFrame:
    """One row per measurement with every context column (``FRAME_COLUMNS``, in that order);
    ``run_started`` and ``time`` are UTC timestamps. By default only the attempt that counts of
    each step; ``final_only=False`` adds earlier attempts (``final`` tells them apart)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    contexts, owner, cols = _frame_columns(records, final_only)
    take = np.array(owner, dtype=np.intp)
    context_columns = list(zip(*contexts, strict=True)) if contexts else [()] * _CONTEXT_WIDTH
    data: dict[str, Any] = {}
    for name, values in zip(FRAME_COLUMNS, [*context_columns, *cols], strict=True):
        per_step = len(data) < _CONTEXT_WIDTH  # run and step columns: one value per step, then repeated
        # one dtype per column whatever the rows hold (an all-empty column too), set once
        if name in _TIME_COLUMNS:
            column = np.array(values, dtype="float64")
            data[name] = utc_times(column[take] if per_step else column)
        elif name in _FLOAT_COLUMNS:
            data[name] = np.array(values, dtype="float64")
        elif name in ("session", "attempt"):
            column = np.array(values, dtype="int64")
            data[name] = column[take] if per_step else column
        elif name == "corner_index":
            data[name] = pd.array(pa.array(values, type=pa.int64(), from_pandas=True).take(take).to_pandas(),
                                  dtype="Int64")
        elif name == "final":
            column = np.array(values, dtype=bool)
            data[name] = column[take] if per_step else column
        else:  # text through pyarrow directly (a step's text taken per measurement inside arrow)
            column = pa.array(values, type=pa.large_string(), from_pandas=True)  # pandas' own storage: no cast
            data[name] = pd.arrays.ArrowStringArray(column.take(take) if per_step else column)
    return pd.DataFrame(data, columns=list(FRAME_COLUMNS))
