"""Helpers for tests that need a real results database (used by the store's tests and by the
engine's kill/resume tests).

* :func:`temporary_database` yields a fresh SQLite file or a fresh PostgreSQL schema (on the
  server named by ``$LABCTL_TEST_PG``, default ``postgresql://postgres@127.0.0.1:5432/test``)
  and drops it afterwards. An unreachable server raises: PostgreSQL tests fail, never skip.
  PostgreSQL schemas are brought to the current revision (``labctl db upgrade``) unless
  ``upgrade=False``; :func:`upgrade_database` does that for a database made elsewhere.
* :func:`verify_after_kill` checks what a killed writer left behind.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import func, select

from labctl.store.schema import measurements, runs, steps
from labctl.store.store import Store, split_step_key

PG_ENV = "LABCTL_TEST_PG"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
BACKENDS = ("sqlite", "postgresql")


def postgres_admin_url() -> str:
    return os.environ.get(PG_ENV, DEFAULT_PG)


@contextmanager
def temporary_database(backend: str, tmp_path: Path, *, upgrade: bool = True) -> Iterator[str]:
    """A URL (or SQLite path) of an empty database of ``backend``, removed afterwards (a
    PostgreSQL one at the current schema revision unless ``upgrade`` is False)."""
    if backend == "sqlite":
        yield str(tmp_path / "results.db")
        return
    import psycopg

    admin = postgres_admin_url()
    schema = "labctl_t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in admin else "?"
    url = f"{admin}{sep}options={quote(f'-csearch_path={schema}')}"
    try:
        if upgrade:
            upgrade_database(url)
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def upgrade_database(url: str, to: str = "head") -> None:
    """``labctl db upgrade --db URL [--to REV]`` in-process (a shared database never migrates
    itself when a store opens)."""
    from labctl.store.migrate import upgrade_location

    upgrade_location(url, to)


@dataclass
class KillCheck:
    outcome: str
    integrity: str
    measurement_counts: dict[str, int]  # step key -> measurements stored (all sessions)
    duplicated_steps: list[str]  # logical steps whose measurements were stored by two sessions


def verify_after_kill(store: Store, run_id: str) -> KillCheck:
    """What a reader sees after the writer of ``run_id`` died (open the store first, so the
    run is marked interrupted), or after it was resumed.

    A step of the ``steps`` group is measured in one session only: the cut-off step keeps no
    measurement, so re-running it on resume must not duplicate anything.
    """
    with store.read_engine.connect() as conn:
        outcome = conn.execute(select(runs.c.outcome).where(runs.c.id == run_id)).scalar_one()
        rows = conn.execute(
            select(steps.c.session, steps.c.step_key, steps.c.step_group, func.count(measurements.c.id))
            .join(measurements, measurements.c.step_ref == steps.c.id)
            .where(steps.c.run_id == run_id)
            .group_by(steps.c.session, steps.c.step_key, steps.c.step_group)
        ).all()
    counts: Counter[str] = Counter()
    sessions: dict[str, set[int]] = {}
    for session, key, group, n in rows:
        counts[key] += n
        if group == "steps":
            sessions.setdefault(split_step_key(key)[0], set()).add(session)
    return KillCheck(
        outcome=outcome,
        integrity=store.integrity_check(),
        measurement_counts=dict(counts),
        duplicated_steps=sorted(k for k, s in sessions.items() if len(s) > 1),
    )
