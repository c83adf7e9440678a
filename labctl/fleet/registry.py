"""The station registry: one ``stations`` row per station, kept by its agent.

An agent registers its station (id from the fixture, host, fixture text, classes, instrument
identities and calibration dates), then refreshes ``heartbeat_at`` with what it is doing
(idle, running job N: run and step, waiting for the database). A station whose heartbeat is
older than ``STALE_FACTOR`` × its interval (or whose agent process is gone, on the same
host) is *offline* since its last heartbeat. One live agent per station: a second one is
refused, an agent that died is replaced.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.engine import Row

from labctl.errors import UsageError
from labctl.fleet.queue import queue_depth
from labctl.store.owner import process_alive, process_token, this_host
from labctl.store.schema import instruments, jobs, stations
from labctl.store.store import STALE_FACTOR, Store


@dataclass(frozen=True)
class StationInfo:
    """What an agent tells the registry about its station."""

    id: str
    fixture_path: str
    fixture_text: str
    classes: list[str]
    instruments: dict[str, dict[str, Any]]
    calibration_due: str | None

    @classmethod
    def from_fixture(cls, fixture: Any, path: str, text: str, classes: list[str]) -> StationInfo:
        roles: dict[str, dict[str, Any]] = {}
        for role, b in fixture.roles.items():
            asset = b.asset
            due = asset.calibration_due.isoformat() if asset is not None and asset.calibration_due else None
            roles[role] = {"driver": b.driver, "resource": b.resource, "idn": "",
                           "asset_serial": asset.serial if asset is not None else None, "calibration_due": due}
        dues = sorted(r["calibration_due"] for r in roles.values() if r["calibration_due"])
        return cls(fixture.station, path, text, sorted(set(classes)), roles, dues[0] if dues else None)


def _alive(row: Row, now: float) -> bool:
    if row.state == "stopped":
        return False
    if row.host == this_host():
        return process_alive(row.pid, row.owner_token)
    return now - row.heartbeat_at <= STALE_FACTOR * row.heartbeat_interval


def register(store: Store, info: StationInfo, agent_id: str, pid: int, heartbeat_interval: float) -> None:
    """Register (or take over, when its last agent is gone) the station; refuse a second agent."""
    from labctl import __version__

    now = store.now()  # (the database's clock: stations whose clocks differ agree about liveness)
    values = dict(host=this_host(), pid=pid, owner_token=process_token(pid), agent_id=agent_id,
                  fixture_path=info.fixture_path, fixture_text=info.fixture_text, classes=info.classes,
                  instruments=info.instruments, calibration_due=info.calibration_due, labctl_version=__version__,
                  state="idle", current_job=None, current_run=None, current_step=None, message="",
                  started_at=now, heartbeat_at=now, heartbeat_interval=heartbeat_interval)
    with store.engine.begin() as conn:
        row = conn.execute(select(stations).where(stations.c.id == info.id).with_for_update()).first()
        if row is None:
            conn.execute(stations.insert().values(id=info.id, **values))
            return
        if _alive(row, now):
            raise UsageError(f"station {info.id} already has a live agent (host {row.host}, pid {row.pid}, "
                             f"last heartbeat {now - row.heartbeat_at:.0f} s ago)",
                             hint="stop that agent first; one agent runs a station")
        conn.execute(update(stations).where(stations.c.id == info.id).values(**values))


def heartbeat(store: Store, station: str, agent_id: str, **status: Any) -> bool:
    """Refresh the station's heartbeat and status; False when another agent holds it now."""
    with store.engine.begin() as conn:
        res = conn.execute(update(stations).where(stations.c.id == station, stations.c.agent_id == agent_id)
                           .values(heartbeat_at=store.now(), **status))
        return res.rowcount == 1


def record_identities(store: Store, station: str, agent_id: str, run_id: str) -> None:
    """Keep the instrument identities (``*IDN?``) the run's pre-flight read."""
    with store.read_engine.connect() as conn:
        rows = conn.execute(select(instruments.c.role, instruments.c.idn).where(instruments.c.run_id == run_id)).all()
        current = conn.execute(select(stations.c.instruments).where(stations.c.id == station)).scalar()
    if not rows or current is None:
        return
    roles = {k: dict(v) for k, v in current.items()}
    for role, idn in rows:
        if role in roles and idn:
            roles[role]["idn"] = idn
    heartbeat(store, station, agent_id, instruments=roles)


def stopped(store: Store, station: str, agent_id: str, message: str) -> None:
    heartbeat(store, station, agent_id, state="stopped", current_job=None, current_run=None,
              current_step=None, message=message)


def list_stations(store: Store, now: float | None = None) -> list[dict[str, Any]]:
    """Every registered station with its state, as ``labctl stations`` shows it."""
    now = store.now() if now is None else now
    depth = queue_depth(store)
    with store.read_engine.connect() as conn:
        rows = conn.execute(select(stations).order_by(stations.c.id)).all()
        plans = dict(conn.execute(select(jobs.c.id, jobs.c.plan_name)
                                  .where(jobs.c.id.in_([r.current_job for r in rows if r.current_job]))).all())
    out = []
    for r in rows:
        alive = _alive(r, now)
        if not alive:
            state = "stopped" if r.state == "stopped" else "offline"
        elif r.state == "running" and r.current_job is not None:
            state = f"running job {r.current_job}"
        else:
            state = r.state
        queued = depth.get(("station", r.id), 0) + sum(depth.get(("class", c), 0) for c in (r.classes or []))
        due = r.calibration_due
        out.append({
            "station": r.id, "state": state, "since": None if alive else r.heartbeat_at,
            "host": r.host, "pid": r.pid, "heartbeat_at": r.heartbeat_at, "heartbeat_age_s": round(now - r.heartbeat_at, 1),
            "job": r.current_job if alive else None, "plan": plans.get(r.current_job) if alive else None,
            "run": r.current_run if alive else None, "step": r.current_step if alive else None,
            "calibration_due": due, "calibration_overdue": bool(due and due < dt.date.today().isoformat()),
            "queued": queued, "classes": list(r.classes or []), "instruments": dict(r.instruments or {}),
            "labctl_version": r.labctl_version,
            "message": r.message,
        })
    return out
