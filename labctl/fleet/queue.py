"""The job queue: rows of ``jobs`` in the shared results database.

A job is a plan *bundle* (the plan file's text and the text of every file it includes, with
the hash a run records: what runs is what was submitted), its ``--set`` values and DUT, and a
target: one station, or any station of a class. Claiming takes the next job for a station —
highest priority first, then oldest — with ``SELECT … FOR UPDATE SKIP LOCKED`` inside the
claiming transaction, so two agents never take one job and never wait for each other
(SQLite, one station's file, gets the same from its write lock).

States: ``queued`` → ``running`` → ``passed`` | ``failed`` | ``error`` | ``aborted``; a job of
an agent that died is ``interrupted`` (:func:`reap`) until its station's agent takes it back
and resumes its run; ``cancelling`` while a cancelled running job is being aborted, then
``cancelled``. Every change an agent makes is guarded by its ``agent_id``: an agent that lost
its claim changes nothing. A job that has started a run is bound to that station (its run is
resumed there) unless it was submitted ``portable``: then another station of its class may
start it afresh, from the queue or once it is ``interrupted``.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import and_, case, false, func, not_, or_, select, update
from sqlalchemy.engine import Row

from labctl.errors import PlanError, UsageError, ValidationErrors
from labctl.fleet.wake import notify
from labctl.store.owner import process_alive
from labctl.store.schema import jobs, stations
from labctl.store.store import STALE_FACTOR, Store

FINAL_STATES = ("passed", "failed", "error", "aborted", "cancelled")
OPEN_STATES = ("queued", "running", "interrupted", "cancelling")
HELD_STATES = ("running", "interrupted", "cancelling")  # a station holds the job


@dataclass(frozen=True)
class PlanBundle:
    name: str
    file: str  # the plan's file name
    text: str
    files: dict[str, str]  # included files, relative to the plan's folder -> text
    sha256: str


def bundle_plan(path: str, overrides: dict[str, str], targets: list[tuple[str, Any]]) -> PlanBundle:
    """Check the plan with ``overrides`` against every target station's fixture and pack it.
    Raises :class:`ValidationErrors` (exit 4) naming the station a plan does not fit."""
    from labctl.plan.loader import check_plan
    from labctl.resources import resolve_data_path

    if not resolve_data_path(path, "testplans").is_file():
        raise UsageError(f"no plan file {path}: nothing was queued", hint="check the path (or a built-in plan's name)")
    loaded = None
    for station, fixture in targets:
        loaded, errors = check_plan(path, overrides, fixture)
        if errors or loaded is None:
            head = PlanError(f"the plan does not fit station {station}: nothing was queued", file=path,
                             hint="fix the plan, or pick a station (or class) whose fixture offers what it needs")
            raise ValidationErrors([head, *errors])
    assert loaded is not None
    top = Path(loaded.files[0]).resolve()
    files: dict[str, str] = {}
    for extra in loaded.files[1:]:
        real = Path(extra).resolve()
        try:
            rel = real.relative_to(top.parent)
        except ValueError:
            raise UsageError(f"{path}: includes {extra}, outside the plan's folder; a queued plan carries its "
                             "includes with it", hint="copy that library beside the plan and include it from there") from None
        files[rel.as_posix()] = real.read_text(encoding="utf-8")
    return PlanBundle(loaded.plan.name, top.name, top.read_text(encoding="utf-8"), files, loaded.sha256)


def write_bundle(job: Row, folder: Path) -> Path:
    """Write the job's plan files under ``folder`` (as submitted); returns the plan's path."""
    folder.mkdir(parents=True, exist_ok=True)
    top = folder / job.plan_file
    for rel, text in (job.plan_files or {}).items():
        dest = (folder / rel).resolve()
        if not dest.is_relative_to(folder.resolve()):
            raise UsageError(f"job {job.id}: included file {rel!r} points outside its folder")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text, encoding="utf-8")
    top.write_text(job.plan_text, encoding="utf-8")
    return top


def fixture_from_text(station: str, text: str) -> Any:
    from labctl.fixture import load_fixture

    with tempfile.TemporaryDirectory(prefix="labctl-fixture-") as tmp:
        path = Path(tmp) / f"{station}.yaml"
        path.write_text(text, encoding="utf-8")
        return load_fixture(str(path))


def target_fixtures(store: Store, station: str | None, station_class: str | None) -> list[tuple[str, Any]]:
    """The fixtures of the stations a job would run on, as their agents registered them."""
    with store.read_engine.connect() as conn:
        rows = conn.execute(select(stations.c.id, stations.c.classes, stations.c.fixture_text)).all()
    known = sorted(r.id for r in rows)
    if station is not None:
        chosen = [r for r in rows if r.id == station]
        if not chosen:
            raise UsageError(f"no station {station!r} is registered in {store.display_url}",
                             hint=("registered: " + ", ".join(known)) if known else
                             "start `labctl agent --fixture F --db URL` on the station first")
    else:
        chosen = [r for r in rows if station_class in (r.classes or [])]
        if not chosen:
            raise UsageError(f"no station of class {station_class!r} is registered in {store.display_url}",
                             hint="start agents with --class " + str(station_class))
    return [(r.id, fixture_from_text(r.id, r.fixture_text)) for r in chosen]


def submit(store: Store, bundle: PlanBundle, *, station: str | None, station_class: str | None,
           dut: str | None, overrides: dict[str, str], priority: int = 0, portable: bool = False,
           user: str | None = None) -> int:
    with store.engine.begin() as conn:
        notify(conn)
        return conn.execute(jobs.insert().values(
            plan_name=bundle.name, plan_file=bundle.file, plan_text=bundle.text, plan_files=bundle.files or None,
            plan_sha256=bundle.sha256, parameters=overrides or None, dut_serial=dut, station=station,
            station_class=station_class, portable=portable, priority=priority, submitted_at=time.time(),
            submitted_by=user, state="queued",
        ).returning(jobs.c.id)).scalar_one()


def get(store: Store, job_id: int) -> Row:
    with store.read_engine.connect() as conn:
        row = conn.execute(select(jobs).where(jobs.c.id == job_id)).first()
    if row is None:
        raise UsageError(f"no job {job_id} in {store.display_url}", hint="`labctl queue list` shows the jobs")
    return row


def list_jobs(store: Store, states: tuple[str, ...] | None = None, station: str | None = None,
              limit: int = 200) -> list[Row]:
    q = select(jobs.c.id, jobs.c.state, jobs.c.priority, jobs.c.plan_name, jobs.c.dut_serial, jobs.c.station,
               jobs.c.station_class, jobs.c.claimed_by, jobs.c.run_id, jobs.c.submitted_at, jobs.c.submitted_by,
               jobs.c.claimed_at, jobs.c.ended_at, jobs.c.exit_code, jobs.c.claims, jobs.c.plan_sha256,
               jobs.c.parameters, jobs.c.message)
    if states:
        q = q.where(jobs.c.state.in_(states))
    if station:
        q = q.where(or_(jobs.c.station == station, jobs.c.claimed_by == station))
    q = q.order_by(jobs.c.id.desc()).limit(limit)
    with store.read_engine.connect() as conn:
        return list(conn.execute(q).all())


def cancel(store: Store, job_id: int, by: str | None = None) -> str:
    """Cancel a job: a queued (or interrupted) one at once; a running one is aborted to the
    safe state by its agent. Returns the job's new state."""
    who = f" by {by}" if by else ""
    with store.engine.begin() as conn:
        row = conn.execute(select(jobs.c.state).where(jobs.c.id == job_id).with_for_update()).first()
        if row is None:
            raise UsageError(f"no job {job_id} in {store.display_url}", hint="`labctl queue list` shows the jobs")
        if row.state in FINAL_STATES:
            raise UsageError(f"job {job_id} already ended ({row.state})")
        new = "cancelling" if row.state == "running" else "cancelled"
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(
            state=new, message=f"cancelled{who}", **({"ended_at": time.time()} if new == "cancelled" else {})))
    return new


def _claimable(station: str, classes: list[str]) -> Any:
    by_class = and_(jobs.c.station.is_(None), jobs.c.station_class.in_(classes)) if classes else false()
    target = or_(jobs.c.station == station, by_class)
    bound = or_(jobs.c.run_id.is_(None), jobs.c.portable, jobs.c.claimed_by == station)
    # a portable job whose agent died is not left waiting for that station: another of its
    # class starts it afresh (its own station, were it back, would have taken it first)
    moved = and_(jobs.c.state == "interrupted", jobs.c.portable, by_class, jobs.c.claimed_by != station)
    return or_(and_(jobs.c.state == "queued", target, bound), moved)


def claim(store: Store, station: str, agent_id: str, classes: list[str]) -> Row | None:
    """Take the next job for ``station``: its own interrupted jobs first (their runs resume),
    then queued ones by priority and age. None when there is nothing to do."""
    now = time.time()
    with store.engine.begin() as conn:
        mine = (select(jobs.c.id).where(jobs.c.claimed_by == station, jobs.c.state.in_(HELD_STATES),
                                        or_(jobs.c.agent_id.is_(None), jobs.c.agent_id != agent_id))
                .order_by(jobs.c.id).limit(1).with_for_update(skip_locked=True))
        job_id = conn.execute(mine).scalar()
        taking_back = job_id is not None
        if job_id is None:
            nxt = (select(jobs.c.id).where(_claimable(station, classes))
                   .order_by(jobs.c.priority.desc(), jobs.c.submitted_at, jobs.c.id)
                   .limit(1).with_for_update(skip_locked=True))
            job_id = conn.execute(nxt).scalar()
        if job_id is None:
            return None
        values: dict[str, Any] = {"agent_id": agent_id, "claimed_at": now, "claims": jobs.c.claims + 1}
        if not taking_back:
            values |= {"state": "running", "claimed_by": station}
        elif conn.execute(select(jobs.c.state).where(jobs.c.id == job_id)).scalar() == "interrupted":
            values["state"] = "running"
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(**values))
        return conn.execute(select(jobs).where(jobs.c.id == job_id)).first()


def _mine(job_id: int, agent_id: str) -> tuple[Any, ...]:
    return (jobs.c.id == job_id, jobs.c.agent_id == agent_id, jobs.c.state.in_(HELD_STATES))


def set_run(store: Store, job_id: int, agent_id: str, run_id: str | None) -> bool:
    with store.engine.begin() as conn:
        return conn.execute(update(jobs).where(*_mine(job_id, agent_id)).values(run_id=run_id)).rowcount == 1


def job_state(store: Store, job_id: int) -> str | None:
    with store.read_engine.connect() as conn:
        return conn.execute(select(jobs.c.state).where(jobs.c.id == job_id)).scalar()


def finish(store: Store, job_id: int, agent_id: str, state: str, exit_code: int | None, message: str = "") -> bool:
    """Record a job's end (a cancelled job that ended aborted is ``cancelled``)."""
    with store.engine.begin() as conn:
        current = conn.execute(select(jobs.c.state, jobs.c.message).where(*_mine(job_id, agent_id))
                               .with_for_update()).first()
        if current is None:
            return False
        if current.state == "cancelling" and state in ("aborted", "passed", "failed", "error"):
            state, message = "cancelled", f"{current.message}; run {state}" if message == "" else f"{current.message}; {message}"
        conn.execute(update(jobs).where(jobs.c.id == job_id).values(
            state=state, exit_code=exit_code, ended_at=time.time(), message=message))
        return True


def release(store: Store, job_id: int, agent_id: str, message: str, *, forget_run: bool = False) -> bool:
    """Give a job back to the queue (the agent stops, or the database failed before the run
    started). A job whose run started stays bound to this station: its run resumes there."""
    values: dict[str, Any] = {"state": "queued", "agent_id": None, "message": message}
    if forget_run:
        values["run_id"] = None
    with store.engine.begin() as conn:
        cur = conn.execute(select(jobs.c.state).where(*_mine(job_id, agent_id)).with_for_update()).scalar()
        if cur is None:
            return False
        if cur == "cancelling":
            values = {"state": "cancelled", "ended_at": time.time(), "agent_id": None}
        else:
            notify(conn)
        return conn.execute(update(jobs).where(jobs.c.id == job_id).values(**values)).rowcount == 1


def reap(store: Store, now: float | None = None) -> list[int]:
    """Mark ``interrupted`` the running jobs whose agent is gone: its station has another
    agent now, its process is dead (same host), or its heartbeat is stale."""
    from labctl.store.owner import this_host

    now = store.now() if now is None else now  # (the clock the stations' heartbeats are stamped with)
    with store.read_engine.connect() as conn:
        rows = conn.execute(
            select(jobs.c.id, jobs.c.agent_id, jobs.c.claimed_by, jobs.c.portable, jobs.c.station,
                   jobs.c.station_class, stations.c.agent_id.label("station_agent"),
                   stations.c.host, stations.c.pid, stations.c.owner_token, stations.c.heartbeat_at,
                   stations.c.heartbeat_interval)
            .select_from(jobs.outerjoin(stations, stations.c.id == jobs.c.claimed_by))
            .where(jobs.c.state.in_(("running", "cancelling")))
        ).all()
    host = this_host()
    marked: list[int] = []
    for r in rows:
        if r.station_agent is None or r.station_agent != r.agent_id:
            why = f"the agent of station {r.claimed_by} that ran it is gone"
        elif r.host == host and not process_alive(r.pid, r.owner_token):
            why = f"the agent of station {r.claimed_by} (pid {r.pid}) is gone"
        elif now - r.heartbeat_at > STALE_FACTOR * r.heartbeat_interval:
            why = f"no heartbeat from station {r.claimed_by} for {now - r.heartbeat_at:.0f} s"
        else:
            continue
        with store.engine.begin() as conn:
            res = conn.execute(update(jobs).where(jobs.c.id == r.id, jobs.c.agent_id == r.agent_id,
                                                  jobs.c.state.in_(("running", "cancelling")))
                               .values(state="interrupted", message=f"interrupted: {why}; {_next_for(r)}"))
        if res.rowcount == 1:
            marked.append(r.id)
    return marked


def _next_for(job: Any) -> str:
    """What becomes of an interrupted job (its message)."""
    if job.portable and job.station is None:
        return f"another station of class {job.station_class} starts it afresh, or its station resumes it"
    return "its station resumes it"


def queue_depth(store: Store) -> dict[tuple[str, str], int]:
    """Queued jobs per target: ``("station", id)`` or ``("class", name)``. A class job whose
    run began on one station (and is not ``--portable``) waits for that station alone (only it
    may claim it, to resume its run): it is that station's."""
    bound = and_(jobs.c.run_id.is_not(None), not_(jobs.c.portable), jobs.c.claimed_by.is_not(None))
    owner = case((jobs.c.station.is_not(None), jobs.c.station), (bound, jobs.c.claimed_by), else_=None)
    with store.read_engine.connect() as conn:
        rows = conn.execute(
            select(owner.label("owner"), jobs.c.station_class, func.count())
            .where(jobs.c.state == "queued").group_by("owner", jobs.c.station_class)
        ).all()
    out: dict[tuple[str, str], int] = {}
    for st, cls, n in rows:
        key = ("station", st) if st is not None else ("class", cls)
        out[key] = out.get(key, 0) + n
    return out
