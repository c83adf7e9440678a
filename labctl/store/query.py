"""Reading the store: plain rows for the command line, pandas DataFrames for notebooks.

    from labctl.store import open_store, query
    store = open_store()
    query.runs(store, plan="power-smoke", since="7d")       # one row per run
    query.measurements(store, dut="DUT-17")                  # every context column a report needs
    query.samples(store, run_id, series="chamber_temp")

DataFrame functions import pandas lazily; times become UTC timestamps there. Measurements
default to the final attempt of each step (``final_only=False`` returns every attempt).
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, case, func, literal, not_, or_, select
from sqlalchemy.sql import Select

from labctl.engine.events import RunOutcome
from labctl.engine.replay import REPLAY_MESSAGE
from labctl.errors import RunNotFound, UsageError
from labctl.store import schema as T
from labctl.store.store import Store, split_step_key
from labctl.units import is_offset_unit, ran_seconds, run_duration

if TYPE_CHECKING:
    import pandas as pd

_UNITS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str | float | datetime | None, now: float | None = None, *,
                option: str = "--since") -> float | None:
    """``"2h"``, ``"3d"``, ``"2026-11-30"``, ``"2026-11-30T08:00"``, a datetime or epoch -> epoch.

    For ``option="--until"`` a plain date means the end of that day (``--until 2026-11-30``
    includes the runs of the 30th)."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, datetime):  # one without a zone is local time, as a typed date-time is
        return (value if value.tzinfo else value.astimezone()).timestamp()
    if isinstance(value, date):
        value = value.isoformat()
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)\s*", value)
    if m:
        return (time.time() if now is None else now) - float(m.group(1)) * _UNITS[m.group(2)]
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        raise UsageError(
            f"cannot read {option} {value!r}",
            hint="use an age like 30m, 12h, 7d or a date like 2026-11-30 or 2026-11-30T08:00",
        ) from None
    plain_date = re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", value.strip()) is not None  # (2026-11-30, 20261130)
    if option == "--until" and plain_date:
        dt += timedelta(days=1)
    if dt.tzinfo is None and not plain_date:  # (a day starts at its first instant: fold 0)
        _check_local_time(dt, option, value.strip())
    return (dt if dt.tzinfo else dt.astimezone()).timestamp()


def _check_local_time(dt: datetime, option: str, value: str) -> None:
    """A local date-time that happens twice (the hour the clocks go back) or never (the hour
    they go forward) is refused: either reading could be an hour off what was meant."""
    first, second = dt.replace(fold=0).timestamp(), dt.replace(fold=1).timestamp()
    if first == second:
        return
    before, after = _utc_offset(min(first, second) - 7200), _utc_offset(max(first, second) + 7200)
    if datetime.fromtimestamp(first) == datetime.fromtimestamp(second) == dt.replace(fold=0):
        raise UsageError(f"{option} {value!r} happens twice in local time (the clocks go back then)",
                         hint=f"say which with its UTC offset: {value}{before} (the first) or "
                              f"{value}{after} (the second)")
    raise UsageError(f"{option} {value!r} does not exist in local time (the clocks go forward then)",
                     hint=f"give a time outside that hour, or its UTC offset, e.g. {value}{before} "
                          f"(read on the clock before the change)")


def _utc_offset(epoch: float) -> str:
    """``+02:00``: the local UTC offset at ``epoch``."""
    minutes = round(datetime.fromtimestamp(epoch).astimezone().utcoffset().total_seconds() / 60)  # type: ignore[union-attr]
    sign, minutes = ("+" if minutes >= 0 else "-"), abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


#: the run outcomes a filter may name, ended ones first (the order the hint lists them in)
RUN_OUTCOMES = (*(o.value for o in RunOutcome if o is not RunOutcome.RUNNING), RunOutcome.RUNNING.value)


def parse_outcomes(value: str, *, option: str = "--outcome") -> list[str]:
    """``--outcome failed,error`` -> the run outcomes; a word that is no run outcome is a usage
    error (it matched no run, which read as "no run failed")."""
    wanted = [o.strip().lower() for o in value.split(",") if o.strip()]
    unknown = [o for o in wanted if o not in RUN_OUTCOMES]
    if unknown or not wanted:
        raise UsageError(f"{option} {value!r}: {unknown[0]!r} is not a run outcome" if unknown
                         else f"{option} {value!r} names no outcome",
                         hint=f"use one or more of {', '.join(RUN_OUTCOMES)}, comma-separated")
    return wanted


# -- runs -----------------------------------------------------------------------------------

def _count_steps(outcome: str) -> Any:
    """The run's plan steps whose verdict is ``outcome``: each step (and corner) once, by its
    final attempt (a retry, a resumed session and a replay are not more steps); the safe
    state is not one of them."""
    return (
        select(func.count()).select_from(T.steps)
        .where(T.steps.c.run_id == T.runs.c.id, T.steps.c.outcome == outcome,
               T.steps.c.check_name != "safe_state", final_step_clause())
        .scalar_subquery()
    )


def _like_pattern(value: str) -> str:
    """A filter with ``*`` wildcards as a LIKE pattern; ``%`` and ``_`` in it match only themselves."""
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%")


@dataclass(frozen=True)
class RunFilters:
    """Which runs: the filters of ``labctl runs`` and ``labctl report``. Names match exactly,
    or with ``*`` wildcards; ``outcome`` is comma-separated; ``since``/``until`` take an age
    (30m, 12h, 7d), a date or a datetime (see :func:`parse_since`)."""

    plan: str | None = None
    plan_version: str | None = None
    dut: str | None = None
    station: str | None = None
    outcome: str | None = None
    since: Any = None
    until: Any = None
    limit: int | None = None

    def any(self) -> bool:
        return any(v not in (None, "") for k, v in vars(self).items() if k != "limit")

    def where(self, q: Select) -> Select:
        """``q`` (a select over ``runs``) narrowed to these filters."""
        for column, value in ((T.runs.c.plan_name, self.plan), (T.runs.c.plan_version, self.plan_version),
                              (T.runs.c.dut_serial, self.dut), (T.runs.c.station, self.station)):
            if value:
                q = q.where(column.like(_like_pattern(value), escape="\\") if "*" in value else column == value)
        if self.outcome:
            q = q.where(T.runs.c.outcome.in_(parse_outcomes(self.outcome)))
        since_t = parse_since(self.since)
        if since_t is not None:
            q = q.where(T.runs.c.started_at >= since_t)
        until_t = parse_since(self.until, option="--until")
        if until_t is not None:
            q = q.where(T.runs.c.started_at < until_t)
        return q.limit(self.limit) if self.limit else q


def _ran_seconds() -> Any:
    """How long the run's sessions ran together (NULL while one has not ended): a run resumed
    after a weekend ran for its sessions, not for the weekend between them."""
    rs = T.run_sessions
    return (
        select(case((func.count(rs.c.ended_at) == func.count(), func.sum(rs.c.ended_at - rs.c.started_at)),
                    else_=None))
        .where(rs.c.run_id == T.runs.c.id)
        .scalar_subquery()
    )


def _runs_select(filters: RunFilters) -> Select:
    q = select(
        T.runs.c.id, T.runs.c.started_at, T.runs.c.ended_at, T.runs.c.outcome, T.runs.c.plan_name,
        T.runs.c.plan_version, T.runs.c.plan_hash, T.runs.c.station, T.runs.c.slot, T.runs.c.dut_serial,
        T.runs.c.operator, T.runs.c.labctl_version, T.runs.c.host, T.runs.c.pid, T.runs.c.sessions,
        T.runs.c.resumed_from, T.runs.c.rerun_of, T.runs.c.message,
        _count_steps("PASS").label("steps_passed"), _count_steps("FAIL").label("steps_failed"),
        _count_steps("ERROR").label("steps_error"), _ran_seconds().label("ran_s"),
    ).order_by(T.runs.c.started_at.desc(), T.runs.c.id.desc())
    return filters.where(q)


def list_runs(store: Store, filters: RunFilters | None = None, **kw: Any) -> list[dict[str, Any]]:
    """Runs newest first, as dicts (``filters``, or its fields as keywords: ``plan=…, since=…``)."""
    with store.read_engine.connect() as conn:
        return _with_duration([dict(r._mapping) for r in conn.execute(_runs_select(filters or RunFilters(**kw)))])


def find_run(store: Store, run_id: str) -> str:
    """The full id of a run given its id or a unique prefix of it."""
    with store.read_engine.connect() as conn:
        if conn.execute(select(T.runs.c.id).where(T.runs.c.id == run_id)).first():
            return run_id
        # a prefix, taken literally: % and _ in it are not LIKE wildcards
        found = conn.execute(select(T.runs.c.id).where(T.runs.c.id.startswith(run_id, autoescape=True))
                             .limit(5)).scalars().all()
    if len(found) == 1:
        return found[0]
    if not found:
        from labctl.store.spool import not_recorded_hint

        raise RunNotFound(f"no run {run_id!r} in {store.display_url}",
                          hint=not_recorded_hint(run_id, "`labctl runs` lists the recorded runs"))
    raise RunNotFound(f"run id prefix {run_id!r} is ambiguous ({', '.join(found)}, …)", hint="give more of the id")


# -- steps and measurements -------------------------------------------------------------------

def final_step_clause() -> Any:
    """True for the latest finished attempt of each step (per run, group, step id, corner).
    A replay on resume (labctl.engine.replay) only re-establishes state: unless it failed or
    errored (then it decides the step's verdict), it is never final, and the attempt before
    it (with the measurements) stays final."""
    later = T.steps.alias()  # (a Core alias: the ORM's `aliased` costs every reading command ~0.1 s of import)
    return and_(
        not_(_replay_not_final(T.steps)),
        not_(select(literal(1)).where(
            later.c.run_id == T.steps.c.run_id, later.c.step_group == T.steps.c.step_group,
            later.c.step_id == T.steps.c.step_id,
            func.coalesce(later.c.corner_index, -1) == func.coalesce(T.steps.c.corner_index, -1),
            later.c.outcome.is_not(None), later.c.outcome != "INTERRUPTED", not_(_replay_not_final(later)),
            or_(later.c.session > T.steps.c.session,
                and_(later.c.session == T.steps.c.session, later.c.seq > T.steps.c.seq)),
        ).exists()),
    )


def _replay_not_final(table: Any) -> Any:
    return and_(table.c.outcome.in_(("PASS", "SKIPPED", "ABORTED")),
                table.c.message.startswith(REPLAY_MESSAGE, autoescape=True))


_STEP_IDENTITY = (
    T.steps.c.run_id, T.steps.c.session, T.steps.c.step_key, T.steps.c.step_id, T.steps.c.step_group.label("group"),
    T.steps.c.check_name.label("check"), T.steps.c.corner, T.steps.c.corner_index, T.steps.c.attempt,
)
_STEP_COLUMNS = (
    *_STEP_IDENTITY, T.steps.c.started_at, T.steps.c.ended_at, T.steps.c.duration, T.steps.c.duration_sim,
    T.steps.c.outcome, T.steps.c.message,
)
_RUN_CONTEXT = (
    T.runs.c.plan_name, T.runs.c.plan_version, T.runs.c.plan_hash, T.runs.c.station, T.runs.c.slot,
    T.runs.c.dut_serial, T.runs.c.operator,
)
_MEASUREMENT_COLUMNS = (
    T.measurements.c.name, T.measurements.c.value, T.measurements.c.value_text, T.measurements.c.unit,
    T.measurements.c.low, T.measurements.c.high, T.measurements.c.nominal, T.measurements.c.marginal_low,
    T.measurements.c.marginal_high, T.measurements.c.limit_text, T.measurements.c.verdict,
    T.measurements.c.lane, T.measurements.c.rail, T.measurements.c.channel, T.measurements.c.sensor,
    T.measurements.c.labels, T.measurements.c.t,
)

#: measurements in plan order: by run, then as their steps ran, then as each step recorded them
_MEASUREMENT_ORDER = (T.runs.c.started_at, T.steps.c.session, T.steps.c.seq, T.measurements.c.seq)


def _measurements_select(run_ids: list[str] | None, final_only: bool, **filters: Any) -> Select:
    q = (
        select(*_RUN_CONTEXT, *_STEP_IDENTITY, T.steps.c.outcome.label("step_outcome"), *_MEASUREMENT_COLUMNS)
        .select_from(T.measurements.join(T.steps, T.measurements.c.step_ref == T.steps.c.id).join(T.runs, T.runs.c.id == T.steps.c.run_id))
        .order_by(*_MEASUREMENT_ORDER)
    )
    if run_ids is not None:
        q = q.where(T.steps.c.run_id.in_(run_ids))
    if final_only:
        q = q.where(final_step_clause())
    for key, column in (("plan", T.runs.c.plan_name), ("dut", T.runs.c.dut_serial), ("station", T.runs.c.station),
                        ("name", T.measurements.c.name), ("verdict", T.measurements.c.verdict)):
        if filters.get(key):
            q = q.where(column == filters[key])
    since_t = parse_since(filters.get("since"))
    if since_t is not None:
        q = q.where(T.runs.c.started_at >= since_t)
    return q


def step_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    q = (select(*_STEP_COLUMNS, final_step_clause().label("final"))
         .where(T.steps.c.run_id == run_id).order_by(T.steps.c.session, T.steps.c.seq))
    with store.read_engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(q)]


def measurement_rows(store: Store, run_id: str, *, final_only: bool = True) -> list[dict[str, Any]]:
    with store.read_engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(_measurements_select([run_id], final_only))]


#: a measurement that did not pass, listed first (in this order) by ``labctl runs show`` and the TUI
_NOT_PASSED = ("FAIL", "MARGINAL")


def _triage_rank() -> Any:
    """A measurement's place in triage order: its verdict's index in :data:`_NOT_PASSED`, the rest after."""
    verdict = T.measurements.c.verdict
    return case(*((verdict == v, i) for i, v in enumerate(_NOT_PASSED)), else_=len(_NOT_PASSED))


def _step_not_passed() -> Any:
    """A step that did not pass: failed, errored, aborted, interrupted, or not ended."""
    return or_(T.steps.c.outcome.is_(None), T.steps.c.outcome.not_in(("PASS", "SKIPPED")))


def run_detail(store: Store, run_id: str, *, shown: int | None = None) -> dict[str, Any]:
    """Everything ``labctl runs show`` prints: the run, sessions, instruments, steps, measurements
    (failures first), prompts, instrument errors, attachments.

    ``shown`` (the table without ``--all``): of a longer run, ``steps`` holds only the first
    ``shown`` steps and every later one that did not pass, ``measurements`` every failing or
    marginal one and the first ``shown`` of the others; ``step_count`` and ``passing_count``
    say how many there are in all (the rows left out are never read)."""
    run_id = find_run(store, run_id)
    with store.read_engine.connect() as conn:
        run, child = _run_header(conn, run_id)
        if shown is not None:
            child.update(_shown_rows(conn, run_id, shown))
    if shown is None:
        ms = measurement_rows(store, run_id)
        rank = {v: i for i, v in enumerate(_NOT_PASSED)}
        ms.sort(key=lambda m: rank.get(m["verdict"], len(rank)))  # stable: failures first, then plan order
        child.update(steps=step_rows(store, run_id), measurements=ms)
    # (the order `runs show --format json` has always listed them in)
    return {"run": run, "steps": child.pop("steps"), "measurements": child.pop("measurements"), **child}


def run_record(store: Store, run_id: str) -> dict[str, Any]:
    """A run's row, with its ``duration`` (of a resumed run: its sessions together)."""
    run_id = find_run(store, run_id)
    with store.read_engine.connect() as conn:
        return _run_header(conn, run_id)[0]


def _run_header(conn: Any, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run's row (with its duration) and its small child tables: sessions, instruments,
    prompts, instrument errors, attachments (without their content), the number of log lines."""
    run = dict(conn.execute(select(T.runs).where(T.runs.c.id == run_id)).one()._mapping)
    child: dict[str, Any] = {}
    for name, table, cols in (
        ("sessions", T.run_sessions, [c for c in T.run_sessions.c if c.name != "plan_text"]),
        ("instruments", T.instruments, list(T.instruments.c)),
        ("prompts", T.prompts, list(T.prompts.c)),
        ("instrument_errors", T.instrument_errors, list(T.instrument_errors.c)),
        ("attachments", T.attachments, [c for c in T.attachments.c if c.name != "content"]),
    ):
        order = [table.c.session, table.c.seq] if "seq" in table.c else [table.c.session]
        child[name] = [dict(r._mapping) for r in conn.execute(select(*cols).where(table.c.run_id == run_id).order_by(*order))]
    child["log_count"] = conn.execute(select(func.count()).where(T.logs.c.run_id == run_id)).scalar()
    sessions = child["sessions"]
    ran = ran_seconds((x["started_at"], x["ended_at"]) for x in sessions)
    run["duration"] = run_duration(run["started_at"], run["ended_at"], len(sessions), ran)
    return run, child


# -- a long run a page at a time (the TUI's run detail) ----------------------------------------

#: where a step stands in its run: (session, seq), the order the steps ran in
StepPlace = tuple[int, int]


def run_overview(store: Store, run_id: str, page: int) -> dict[str, Any]:
    """What a screen shows of a run first, however long the run: the run and its small child
    tables (as :func:`run_detail`), ``step_counts`` (its final plan steps by outcome, safe states
    left out), the first ``page`` steps in the order they ran (``steps``, ``steps_left``: how
    many come after them), up to ``page`` of the later steps that did not pass (``late``,
    ``late_left``), and the first ``page`` measurements in triage order (failures, marginal,
    then the rest, each in plan order: ``measurements``, ``measurements_total``). Each step row
    carries its ``place`` for :func:`step_page`; nothing beyond the pages is read."""
    run_id = find_run(store, run_id)
    with store.read_engine.connect() as conn:
        run, child = _run_header(conn, run_id)
        steps, left = _step_page(conn, run_id, None, page)
        late, late_left = _step_page(conn, run_id, steps[-1]["place"] if steps else None, page, not_passed=True)
        ms, total = _measurement_page(conn, run_id, 0, page)
        counts = dict(conn.execute(
            select(T.steps.c.outcome, func.count()).where(T.steps.c.run_id == run_id, T.steps.c.check_name != "safe_state",
                                                          final_step_clause()).group_by(T.steps.c.outcome)).all())
    return {"run": run, **child, "step_counts": counts, "steps": steps, "steps_left": left, "late": late,
            "late_left": late_left, "measurements": ms, "measurements_total": total}


def step_page(store: Store, run_id: str, after: StepPlace | None, limit: int, *,
              not_passed: bool = False) -> tuple[list[dict[str, Any]], int]:
    """Up to ``limit`` steps of a run (the full id) in the order they ran, after the step at
    ``after`` (from the start if None), only those that did not pass with ``not_passed``; and
    how many such steps come after the last one returned."""
    with store.read_engine.connect() as conn:
        return _step_page(conn, run_id, after, limit, not_passed=not_passed)


def _step_page(conn: Any, run_id: str, after: StepPlace | None, limit: int | None, *,
               not_passed: bool = False) -> tuple[list[dict[str, Any]], int]:
    where = [T.steps.c.run_id == run_id]
    if after is not None:
        where.append(or_(T.steps.c.session > after[0], and_(T.steps.c.session == after[0], T.steps.c.seq > after[1])))
    if not_passed:
        where.append(_step_not_passed())
    # the page's ids first: the final-attempt test then runs for its rows only, not for every
    # step the sort goes through (a 100,000-step run: 0.18 → 0.03 s)
    ids = select(T.steps.c.id).where(*where).order_by(T.steps.c.session, T.steps.c.seq).limit(limit)
    q = (select(*_STEP_COLUMNS, final_step_clause().label("final"), T.steps.c.seq)
         .where(T.steps.c.id.in_(ids.scalar_subquery())).order_by(T.steps.c.session, T.steps.c.seq))
    rows = []
    for r in conn.execute(q):
        row = dict(r._mapping)
        row["place"] = (row["session"], row.pop("seq"))
        rows.append(row)
    total = conn.execute(select(func.count()).select_from(T.steps).where(*where)).scalar()
    return rows, total - len(rows)


def measurement_page(store: Store, run_id: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Up to ``limit`` final measurements of a run (the full id) from ``offset`` on, in triage
    order (failures, marginal, then the rest, each in plan order: :func:`run_detail`'s), and how
    many there are in all."""
    with store.read_engine.connect() as conn:
        return _measurement_page(conn, run_id, offset, limit)


def _measurement_page(conn: Any, run_id: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    q = _measurements_select([run_id], True)
    ordered = q.order_by(None).order_by(_triage_rank(), *_MEASUREMENT_ORDER)
    rows = [dict(r._mapping) for r in conn.execute(ordered.offset(offset).limit(limit))]
    total = conn.execute(select(func.count()).select_from(q.order_by(None).subquery())).scalar()
    return rows, total


def _shown_rows(conn: Any, run_id: str, shown: int) -> dict[str, Any]:
    """:func:`run_detail`'s cut of a long run's steps and measurements (see there)."""
    steps, left = _step_page(conn, run_id, None, shown)
    step_count = len(steps) + left
    if left:
        steps += _step_page(conn, run_id, steps[-1]["place"], None, not_passed=True)[0]  # (all after the first)
    for step in steps:
        del step["place"]  # (the rows of step_rows)
    ms_q = _measurements_select([run_id], True)
    verdict = T.measurements.c.verdict
    bad = [dict(r._mapping) for r in conn.execute(ms_q.where(verdict.in_(_NOT_PASSED)))]
    bad.sort(key=lambda m: _NOT_PASSED.index(m["verdict"]))  # stable: failures, then marginal, in plan order
    passing = ms_q.where(verdict.not_in(_NOT_PASSED))
    rest = [dict(r._mapping) for r in conn.execute(passing.limit(shown))]
    passing_count = conn.execute(select(func.count()).select_from(passing.order_by(None).subquery())).scalar()
    return {"steps": steps, "measurements": bad + rest, "step_count": step_count, "passing_count": passing_count}


def previous_run(store: Store, run_id: str) -> dict[str, Any] | None:
    """The same DUT's run before this one (the bring-up loop: rework, re-run, compare): of the
    same plan if there is one, else of any plan; None without a DUT serial or an earlier run."""
    run_id = find_run(store, run_id)
    with store.read_engine.connect() as conn:
        this = conn.execute(select(T.runs.c.dut_serial, T.runs.c.plan_name, T.runs.c.started_at)
                            .where(T.runs.c.id == run_id)).one()
        if not this.dut_serial:
            return None
        base = (select(T.runs.c.id).where(T.runs.c.dut_serial == this.dut_serial, T.runs.c.id != run_id,
                                          or_(T.runs.c.started_at < this.started_at,
                                              and_(T.runs.c.started_at == this.started_at, T.runs.c.id < run_id)))
                .order_by(T.runs.c.started_at.desc(), T.runs.c.id.desc()).limit(1))
        found = (conn.execute(base.where(T.runs.c.plan_name == this.plan_name)).scalar()
                 or conn.execute(base).scalar())
    if found is None:
        return None
    return next(iter(list_runs_by_id(store, [found])), None)


def list_runs_by_id(store: Store, run_ids: list[str]) -> list[dict[str, Any]]:
    """The :func:`list_runs` rows of the given runs (newest first)."""
    q = _runs_select(RunFilters()).where(T.runs.c.id.in_(run_ids))
    with store.read_engine.connect() as conn:
        return _with_duration([dict(r._mapping) for r in conn.execute(q)])


def _with_duration(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`_runs_select` rows with their ``duration`` (:func:`run_duration`)."""
    for r in rows:
        r["duration"] = run_duration(r["started_at"], r["ended_at"], r["sessions"], r.pop("ran_s"))
    return rows


def compare_runs(store: Store, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Final measurements of two runs side by side, matched by step, name and labels;
    changed verdicts first, then by the size of the relative change."""
    a_id, b_id = find_run(store, run_a), find_run(store, run_b)
    side: dict[tuple[Any, ...], dict[str, Any]] = {}
    columns = (T.steps.c.step_key, T.measurements.c.name, T.measurements.c.labels, T.measurements.c.unit,
               T.measurements.c.value, T.measurements.c.value_text, T.measurements.c.verdict,
               T.measurements.c.limit_text)
    with store.read_engine.connect() as conn:
        for tag, rid in (("a", a_id), ("b", b_id)):
            # only the columns compared, as plain tuples: two runs of 100,000 measurements are
            # read in a fraction of the time full measurement rows took
            q = _measurements_select([rid], True).with_only_columns(*columns)
            value_of, verdict_of = f"value_{tag}", f"verdict_{tag}"
            for step_key, name, labels, unit, value, value_text, verdict, limit_text in conn.execute(q):
                labels = labels or {}
                step = split_step_key(step_key)[0].split("/", 1)[-1]
                # matched by step (id and corner; not the group, so that a step moved from setup
                # to steps between plan versions still matches), name and labels
                key = (step, name, tuple(sorted(labels.items())))
                row = side.get(key)
                if row is None:
                    row = side[key] = {"step": step, "name": name, "labels": labels, "unit": unit,
                                       "value_a": None, "value_b": None, "verdict_a": None, "verdict_b": None,
                                       "limit_text": limit_text}
                row[value_of] = value if value is not None else value_text
                row[verdict_of] = verdict
    out = []
    for row in side.values():
        va, vb = row["value_a"], row["value_b"]
        numeric = isinstance(va, float) and isinstance(vb, float)
        row["delta"] = vb - va if numeric else None
        # a % change of a temperature in degC is meaningless (interval scale): the delta alone
        row["delta_pct"] = (100.0 * (vb - va) / abs(va)) if numeric and va and not is_offset_unit(row["unit"]) else None
        row["changed"] = row["verdict_a"] != row["verdict_b"]
        out.append(row)
    # a verdict that changed first, then one measured in one run only, then the largest change;
    # the same order whichever run is A
    out.sort(key=lambda r: (not r["changed"], r["verdict_a"] is None or r["verdict_b"] is None,
                            -abs(r["delta_pct"] or 0.0), r["step"], r["name"], sorted(r["labels"].items())))
    return out


# -- DataFrames ------------------------------------------------------------------------------

def _frame(store: Store, q: Select, time_columns: tuple[str, ...]) -> pd.DataFrame:
    import pandas as pd

    with store.read_engine.connect() as conn:
        df = pd.read_sql(q, conn)
    for col in time_columns:
        if col in df:
            df[col] = pd.to_datetime(df[col], unit="s", utc=True)
    return df


def runs(store: Store, **filters: Any) -> pd.DataFrame:
    """One row per run, newest first (filters: the fields of :class:`RunFilters`)."""
    q = _runs_select(RunFilters(**filters))
    df = _frame(store, q, ("started_at", "ended_at"))
    span = (df["ended_at"] - df["started_at"]).dt.total_seconds()
    resumed = (df["sessions"].fillna(1) > 1) & df["ran_s"].notna()
    df["duration_s"] = span.where(~resumed, df["ran_s"])
    return df.drop(columns=["ran_s"])


def steps(store: Store, run_ids: str | list[str] | None = None) -> pd.DataFrame:
    """One row per step attempt (``final`` marks the attempt that counts)."""
    q = select(*_STEP_COLUMNS, final_step_clause().label("final")).order_by(T.steps.c.run_id, T.steps.c.session, T.steps.c.seq)
    if run_ids is not None:
        q = q.where(T.steps.c.run_id.in_([run_ids] if isinstance(run_ids, str) else run_ids))
    return _frame(store, q, ("started_at", "ended_at"))


def measurements(store: Store, run_ids: str | list[str] | None = None, *, final_only: bool = True,
                       plan: str | None = None, dut: str | None = None, station: str | None = None,
                       name: str | None = None, verdict: str | None = None, since: Any = None) -> pd.DataFrame:
    """Measurements with their limits, verdict and every context column (plan, hash, station,
    DUT, step, corner, attempt, time)."""
    ids = [run_ids] if isinstance(run_ids, str) else run_ids
    q = _measurements_select(ids, final_only, plan=plan, dut=dut, station=station, name=name,
                             verdict=verdict, since=since)
    return _frame(store, q, ("t",))


def samples(store: Store, run_ids: str | list[str] | None = None, *, series: str | None = None) -> pd.DataFrame:
    """Time series points (``t``, ``series``, ``value``) with their run and step."""
    q = (select(T.samples.c.run_id, T.steps.c.step_key, T.samples.c.series, T.samples.c.t, T.samples.c.value, T.samples.c.unit)
         .join(T.steps, T.samples.c.step_ref == T.steps.c.id).order_by(T.samples.c.run_id, T.samples.c.t, T.samples.c.seq))
    if run_ids is not None:
        q = q.where(T.samples.c.run_id.in_([run_ids] if isinstance(run_ids, str) else run_ids))
    if series:
        q = q.where(T.samples.c.series == series)
    return _frame(store, q, ("t",))




# -- following a run while it is written (the TUI's watch mode) --------------------------------

@dataclass(frozen=True)
class Cursor:
    """Where :func:`follow` stopped: the last row id seen in each growing table; and, for
    ``every_step=False``, the step rows up to ``settled`` (every one with its outcome, which
    never changes once set) and their ``settled_counts`` (outcome, count), which a poll does
    not read again."""

    measurement: int = 0
    sample: int = 0
    log: int = 0
    settled: int = 0
    settled_counts: tuple[tuple[str, int], ...] = ()


def _of_run(column: Any, run_id: str, after: int) -> Any:
    """``column = run_id``, for rows after the id ``after``: once a poll has a cursor (``after``
    > 0), written ``column || '' = run_id`` so that SQLite finds the few new rows by their ids
    instead of reading every row of the run through the run's index (a poll at step 100,000
    of a run read 100,000 rows for none)."""
    return column == run_id if not after else column.concat("") == run_id


def follow(store: Store, run_id: str, cursor: Cursor | None = None, *, every_step: bool = True,
           newest: int | None = None, newest_samples: int | None = None) -> tuple[dict[str, Any], Cursor]:
    """What a live view needs since ``cursor``: the run row (outcome, heartbeat), every step
    (outcomes change), the measurements, samples and logs committed since, and the
    run's latest stored progress line (``progress``: step_key, text, fraction, t; or None)
    and the question it waits on (``prompt``: the newest unanswered prompt, or None).

        changes, cur = follow(store, run_id)
        while changes["run"]["outcome"] == "running":
            time.sleep(1); changes, cur = follow(store, run_id, cur)

    A view of a long run asks for less, so that a poll costs the same at step 100,000 as at
    step 10: ``every_step=False`` gives, instead of ``steps``, ``step_counts`` (the plan's step
    attempts by outcome, safe states left out; None: running) and ``current_step`` (the last
    of them without an outcome, or None); ``newest=N`` gives only the newest N of the
    measurements since the cursor (in order), with ``measurement_counts``: all of them by
    verdict; ``newest_samples=N`` only the newest N samples of each series since the cursor (a
    plot of the newest N points of a series opened on a day-old soak). The cursor moves past
    all of them either way.
    """
    cur = cursor or Cursor()
    run_id = find_run(store, run_id)
    with store.read_engine.connect() as conn:  # one snapshot for all of it
        run = dict(conn.execute(select(*[c for c in T.runs.c if c.name != "plan_text"])
                                .where(T.runs.c.id == run_id)).one()._mapping)
        step_part: dict[str, Any]
        if every_step:
            step_part = {"steps": [dict(r._mapping) for r in conn.execute(
                select(*_STEP_COLUMNS).where(T.steps.c.run_id == run_id).order_by(T.steps.c.session, T.steps.c.seq))]}
        else:  # only the step rows after the settled ones are read (a poll of step 100,000 reads a few)
            plan_step = and_(_of_run(T.steps.c.run_id, run_id, cur.settled), T.steps.c.check_name != "safe_state",
                             T.steps.c.id > cur.settled)
            current = conn.execute(select(*_STEP_COLUMNS).where(plan_step, T.steps.c.outcome.is_(None))
                                   .order_by(T.steps.c.session.desc(), T.steps.c.seq.desc()).limit(1)).first()
            # the rows before the first one still open are settled for good (counted once, then
            # carried by the cursor); from that one on they are counted at every poll
            first_open = conn.execute(select(func.min(T.steps.c.id))
                                      .where(plan_step, T.steps.c.outcome.is_(None))).scalar()
            settled, counts = cur.settled, Counter(dict(cur.settled_counts))
            for outcome, n, last in conn.execute(
                    select(T.steps.c.outcome, func.count(), func.max(T.steps.c.id))
                    .where(plan_step, *([] if first_open is None else [T.steps.c.id < first_open]))
                    .group_by(T.steps.c.outcome)):
                counts[outcome] += n
                settled = max(settled, last)
            tail: Counter[str | None] = Counter() if first_open is None else Counter(dict(conn.execute(
                select(T.steps.c.outcome, func.count()).where(plan_step, T.steps.c.id >= first_open)
                .group_by(T.steps.c.outcome)).all()))
            step_part = {"step_counts": dict(counts + tail),
                         "current_step": dict(current._mapping) if current is not None else None}
        ms_q = (select(T.measurements.c.id, T.steps.c.step_key, *_MEASUREMENT_COLUMNS)
                .join(T.steps, T.measurements.c.step_ref == T.steps.c.id)
                .where(_of_run(T.steps.c.run_id, run_id, cur.measurement), T.measurements.c.id > cur.measurement))
        if newest is None:
            ms = [dict(r._mapping) for r in conn.execute(ms_q.order_by(T.measurements.c.id))]
        else:
            ms = [dict(r._mapping) for r in conn.execute(ms_q.order_by(T.measurements.c.id.desc()).limit(newest))][::-1]
            step_part["measurement_counts"] = dict(conn.execute(
                ms_q.with_only_columns(T.measurements.c.verdict, func.count())
                .where(T.measurements.c.id <= ms[-1]["id"])  # (those the cursor moves past, however many came since)
                .group_by(T.measurements.c.verdict)).all()) if ms else {}
        ss_q = (select(T.samples.c.id, T.steps.c.step_key, T.samples.c.series, T.samples.c.t, T.samples.c.value,
                       T.samples.c.unit)
                .join(T.steps, T.samples.c.step_ref == T.steps.c.id)
                .where(_of_run(T.samples.c.run_id, run_id, cur.sample), T.samples.c.id > cur.sample))
        if newest_samples is not None:  # (the newest of all is the newest of its series: the cursor is right)
            ranked = ss_q.add_columns(func.row_number().over(partition_by=T.samples.c.series,
                                                             order_by=T.samples.c.id.desc()).label("rank")).subquery()
            ss_q = (select(*[c for c in ranked.c if c.name != "rank"]).where(ranked.c.rank <= newest_samples)
                    .order_by(ranked.c.id))
        else:
            ss_q = ss_q.order_by(T.samples.c.id)
        ss = [dict(r._mapping) for r in conn.execute(ss_q)]
        ls = [dict(r._mapping) for r in conn.execute(
            select(T.logs.c.id, T.logs.c.step_key, T.logs.c.level, T.logs.c.message, T.logs.c.t)
            .where(T.logs.c.run_id == run_id, T.logs.c.id > cur.log).order_by(T.logs.c.id))]
        prog = conn.execute(select(T.progress).where(T.progress.c.run_id == run_id)).first()
        asked = conn.execute(select(T.prompts.c.step_key, T.prompts.c.prompt_id, T.prompts.c.text, T.prompts.c.choices,
                                    T.prompts.c.t)
                             .where(T.prompts.c.run_id == run_id, T.prompts.c.answered_at.is_(None))
                             .order_by(T.prompts.c.session.desc(), T.prompts.c.seq.desc()).limit(1)).first()
    new = Cursor(
        measurement=ms[-1]["id"] if ms else cur.measurement,
        sample=ss[-1]["id"] if ss else cur.sample,
        log=ls[-1]["id"] if ls else cur.log,
        **({} if every_step else {"settled": settled, "settled_counts": tuple(sorted(counts.items()))}),
    )
    return {"run": run, **step_part, "measurements": ms, "samples": ss, "logs": ls,
            "progress": dict(prog._mapping) if prog is not None else None,
            "prompt": dict(asked._mapping) if asked is not None else None}, new
