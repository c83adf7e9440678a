"""The results schema (SQLAlchemy Core). Migrations in ``migrations/versions`` create it.

Times are wall-clock epoch seconds (double precision), also for a run on a time-scaled
simulated bench; the simulated seconds a step took are ``steps.duration_sim``. Every child row
carries a natural key made of the recorder's per-session event sequence number, so writing
the same events twice (a replayed spool, a retried batch) never duplicates anything.

Reports join ``measurements`` to ``steps`` and ``runs`` to get every context column:
plan name/version/hash, station, slot, DUT serial, operator, corner, attempt, time.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

# BIGINT ids on PostgreSQL, INTEGER (the rowid alias) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")
# Python None is SQL NULL (not the JSON text 'null').
Json = JSON(none_as_null=True)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("plan_name", String(200), nullable=False),
    Column("plan_version", String(64), nullable=False, server_default=""),
    Column("plan_hash", String(64), nullable=False),
    Column("plan_path", Text, nullable=False, server_default=""),
    Column("plan_text", Text, nullable=False, server_default=""),
    Column("station", String(200), nullable=False),
    Column("slot", String(64)),
    Column("dut_serial", String(200)),
    Column("operator", String(200)),
    Column("labctl_version", String(32), nullable=False, server_default=""),
    Column("parameters", Json),
    Column("corners", Json),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double),
    Column("outcome", String(16), nullable=False),  # running | passed | failed | error | aborted | interrupted
    Column("message", Text, nullable=False, server_default=""),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("owner_token", String(64), nullable=False, server_default=""),  # pid start time
    Column("heartbeat_at", Double, nullable=False),
    Column("heartbeat_interval", Double, nullable=False),
    Column("resumed_from", String(64)),  # a new run that continues another one
    Column("sessions", Integer, nullable=False, server_default="1"),  # 1 + number of resumes
    Column("rerun_of", String(64)),  # a run that re-ran steps of an earlier run (revision 0003)
    Index(None, "started_at"),
    Index(None, "outcome"),
    Index(None, "plan_name"),
    Index(None, "dut_serial"),
    Index(None, "station"),
    Index(None, "rerun_of"),
)

# One row per process that wrote into a run: session 0 is the original, 1.. are resumes.
run_sessions = Table(
    "run_sessions",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("session", Integer, primary_key=True),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double),
    Column("outcome", String(16)),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("labctl_version", String(32), nullable=False, server_default=""),
    Column("plan_hash", String(64), nullable=False),
    Column("plan_changed", Boolean, nullable=False, server_default="0"),  # resumed with --force
    Column("plan_text", Text),  # the plan this session ran, when it differs from the run's
)

instruments = Table(
    "instruments",
    metadata,
    Column("run_id", String(64), primary_key=True),
    Column("session", Integer, primary_key=True),
    Column("role", String(64), primary_key=True),
    Column("driver", String(200), nullable=False),
    Column("resource", String(300), nullable=False),
    Column("idn", String(300), nullable=False, server_default=""),
    Column("asset_serial", String(100)),
    Column("calibration_due", String(32)),
    ForeignKeyConstraint(
        ["run_id", "session"], ["run_sessions.run_id", "run_sessions.session"], ondelete="CASCADE"
    ),
)

steps = Table(
    "steps",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("session", Integer, nullable=False),
    Column("seq", Integer, nullable=False),
    Column("step_key", String(300), nullable=False),
    Column("step_id", String(200), nullable=False),
    Column("step_group", String(16), nullable=False),  # setup | steps | teardown
    Column("check_name", String(100), nullable=False),
    Column("corner", Json),
    Column("corner_index", Integer),
    Column("attempt", Integer, nullable=False),
    Column("tags", Json),
    Column("started_at", Double, nullable=False),
    Column("ended_at", Double),
    Column("duration", Double),  # wall seconds
    Column("duration_sim", Double),  # simulated seconds, on a time-scaled bench only (revision 0002)
    Column("outcome", String(16)),  # NULL while running (or when the run was cut off in it)
    Column("message", Text, nullable=False, server_default=""),
    UniqueConstraint("run_id", "session", "step_key"),
    # the final attempt of a step is found among the rows of the same run and step id
    # (labctl.store.query.final_step_clause); without it every listing of a run was
    # quadratic in its steps (revision 0005)
    Index(None, "run_id", "step_id"),
)

measurements = Table(
    "measurements",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("step_ref", BigId, ForeignKey("steps.id", ondelete="CASCADE"), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("name", String(200), nullable=False),
    Column("value", Double),  # numeric value (booleans as 0/1)
    Column("value_text", Text),  # the value as text when it is not a number
    Column("unit", String(32), nullable=False, server_default=""),
    Column("low", Double),
    Column("high", Double),
    Column("nominal", Double),
    Column("marginal_low", Double),
    Column("marginal_high", Double),
    Column("limit_equals", Text),  # JSON of the expected value
    Column("limit_regex", Text),
    Column("limit_text", Text),  # as the plan wrote it
    Column("verdict", String(10), nullable=False),
    Column("lane", String(64)),
    Column("rail", String(64)),
    Column("channel", String(64)),
    Column("sensor", String(64)),
    Column("labels", Json),
    Column("t", Double, nullable=False),
    UniqueConstraint("step_ref", "seq"),  # also serves "measurements of a step/run" via steps
    Index(None, "name"),  # trends of one measurement across runs
)

samples = Table(
    "samples",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("step_ref", BigId, ForeignKey("steps.id", ondelete="CASCADE"), nullable=False),
    Column("run_id", String(64), nullable=False),
    Column("seq", Integer, nullable=False),
    Column("series", String(100), nullable=False),
    Column("value", Double, nullable=False),
    Column("unit", String(32), nullable=False, server_default=""),
    Column("t", Double, nullable=False),
    UniqueConstraint("step_ref", "seq"),
    Index(None, "run_id", "series"),
)


def _run_child(name: str, *columns: Column, unique: tuple[str, ...] = ("run_id", "session", "seq")) -> Table:
    """A per-run table keyed by (run, session, event sequence number)."""
    return Table(
        name,
        metadata,
        Column("id", BigId, primary_key=True, autoincrement=True),
        Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        Column("session", Integer, nullable=False),
        Column("seq", Integer, nullable=False),
        Column("step_key", String(300)),
        Column("t", Double, nullable=False),
        *columns,
        UniqueConstraint(*unique),
    )


logs = _run_child(
    "logs",
    Column("level", String(16), nullable=False),
    Column("message", Text, nullable=False),
)

prompts = _run_child(
    "prompts",
    Column("prompt_id", String(200), nullable=False),
    Column("text", Text, nullable=False),
    Column("choices", Json),
    Column("answer", Text),
    Column("answer_source", String(32)),
    Column("answered_at", Double),
    unique=("run_id", "session", "prompt_id"),
)

instrument_errors = _run_child(
    "instrument_errors",
    Column("role", String(64), nullable=False),
    Column("code", Integer, nullable=False),
    Column("message", Text, nullable=False),
)

attachments = _run_child(
    "attachments",
    Column("name", String(200), nullable=False),
    Column("media_type", String(100), nullable=False),
    Column("path", Text, nullable=False),
    Column("size", BigInteger),
    Column("sha256", String(64)),
    Column("content", LargeBinary),  # the file itself (up to a size limit), so reports are self-contained
)

# Instrument I/O: every command and reply of the session log (labctl.instruments.sessionlog).
io_log = _run_child(
    "io_log",
    Column("instrument", String(64), nullable=False),
    Column("resource", String(300), nullable=False, server_default=""),
    Column("kind", String(16), nullable=False),  # write | query | reply | error | note
    Column("text", Text, nullable=False),
    Column("elapsed_s", Double),
)

# The latest progress or wait line of each run ("chamber 43.1 → 45.0 degC, stable 20 s of 2 min"),
# overwritten at most twice a second by the recorder, so a watcher elsewhere sees it (revision 0003).
progress = Table(
    "progress",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("step_key", String(300), nullable=False),
    Column("text", Text, nullable=False),
    Column("fraction", Double),
    Column("t", Double, nullable=False),
)

ALL_TABLES = (
    runs,
    run_sessions,
    instruments,
    steps,
    measurements,
    samples,
    logs,
    prompts,
    instrument_errors,
    attachments,
    io_log,
    progress,
)

# -- the fleet (revision 0004): stations, their agents, the job queue -----------------------

# What an agent said about its station at its last heartbeat (labctl.fleet.registry).
stations = Table(
    "stations",
    metadata,
    Column("id", String(200), primary_key=True),  # the fixture's station id
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("owner_token", String(64), nullable=False, server_default=""),  # the agent's pid start time
    Column("agent_id", String(64), nullable=False),  # one per agent process; guards every write
    Column("fixture_path", Text, nullable=False, server_default=""),
    Column("fixture_text", Text, nullable=False, server_default=""),  # for checking plans at submit
    Column("classes", Json),  # station classes this agent takes jobs of
    Column("instruments", Json),  # role -> {driver, resource, idn, asset_serial, calibration_due}
    Column("calibration_due", String(32)),  # the soonest of its instruments
    Column("labctl_version", String(32), nullable=False, server_default=""),
    Column("state", String(16), nullable=False),  # idle | running | stopped
    Column("current_job", BigInteger),
    Column("current_run", String(64)),
    Column("current_step", String(300)),
    Column("message", Text, nullable=False, server_default=""),
    Column("started_at", Double, nullable=False),
    Column("heartbeat_at", Double, nullable=False),
    Column("heartbeat_interval", Double, nullable=False),
)

jobs = Table(
    "jobs",
    metadata,
    Column("id", BigId, primary_key=True, autoincrement=True),
    Column("plan_name", String(200), nullable=False),
    Column("plan_file", Text, nullable=False),  # the file name it was submitted as
    Column("plan_text", Text, nullable=False),  # what runs is what was submitted
    Column("plan_files", Json),  # included files: path relative to plan_file's folder -> text
    Column("plan_sha256", String(64), nullable=False),  # the plan's hash as a run records it
    Column("parameters", Json),  # --set NAME=VALUE
    Column("dut_serial", String(200)),
    Column("station", String(200)),  # target station, or NULL with a station class
    Column("station_class", String(100)),
    Column("portable", Boolean, nullable=False, server_default="0"),  # may move to another station
    Column("priority", Integer, nullable=False, server_default="0"),  # higher runs first
    Column("submitted_at", Double, nullable=False),
    Column("submitted_by", String(200)),
    Column("state", String(16), nullable=False),  # queued | running | interrupted | passed | failed | error | aborted | cancelled
    Column("claimed_by", String(200)),  # the station running (or that last ran) it
    Column("agent_id", String(64)),  # the agent process holding the claim
    Column("claimed_at", Double),
    Column("claims", Integer, nullable=False, server_default="0"),
    Column("run_id", String(64)),
    Column("ended_at", Double),
    Column("exit_code", Integer),
    Column("message", Text, nullable=False, server_default=""),
    Index(None, "state", "priority", "submitted_at"),
    Index(None, "claimed_by"),
)

# name -> value: ``compatible_with`` is the oldest revision whose code can use this schema.
labctl_schema = Table(
    "labctl_schema",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)
