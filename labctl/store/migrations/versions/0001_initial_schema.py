"""Initial schema: runs, sessions, instruments, steps, measurements, samples, logs, prompts,
instrument errors, attachments and instrument I/O.

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30 05:30:00.790707
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("plan_name", sa.String(length=200), nullable=False),
        sa.Column("plan_version", sa.String(length=64), server_default="", nullable=False),
        sa.Column("plan_hash", sa.String(length=64), nullable=False),
        sa.Column("plan_path", sa.Text(), server_default="", nullable=False),
        sa.Column("plan_text", sa.Text(), server_default="", nullable=False),
        sa.Column("station", sa.String(length=200), nullable=False),
        sa.Column("slot", sa.String(length=64), nullable=True),
        sa.Column("dut_serial", sa.String(length=200), nullable=True),
        sa.Column("operator", sa.String(length=200), nullable=True),
        sa.Column("labctl_version", sa.String(length=32), server_default="", nullable=False),
        sa.Column("parameters", sa.JSON(), nullable=True),
        sa.Column("corners", sa.JSON(), nullable=True),
        sa.Column("started_at", sa.Double(), nullable=False),
        sa.Column("ended_at", sa.Double(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), server_default="", nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("owner_token", sa.String(length=64), server_default="", nullable=False),
        sa.Column("heartbeat_at", sa.Double(), nullable=False),
        sa.Column("heartbeat_interval", sa.Double(), nullable=False),
        sa.Column("resumed_from", sa.String(length=64), nullable=True),
        sa.Column("sessions", sa.Integer(), server_default="1", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_runs")),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_dut_serial"), ["dut_serial"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_outcome"), ["outcome"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_plan_name"), ["plan_name"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_started_at"), ["started_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_runs_station"), ["station"], unique=False)

    op.create_table(
        "attachments",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=True),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("content", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_attachments_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attachments")),
        sa.UniqueConstraint(
            "run_id", "session", "seq", name=op.f("uq_attachments_run_id_session_seq")
        ),
    )
    op.create_table(
        "instrument_errors",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("code", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["runs.id"],
            name=op.f("fk_instrument_errors_run_id_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_instrument_errors")),
        sa.UniqueConstraint(
            "run_id", "session", "seq", name=op.f("uq_instrument_errors_run_id_session_seq")
        ),
    )
    op.create_table(
        "io_log",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.Column("instrument", sa.String(length=64), nullable=False),
        sa.Column("resource", sa.String(length=300), server_default="", nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("elapsed_s", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_io_log_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_io_log")),
        sa.UniqueConstraint("run_id", "session", "seq", name=op.f("uq_io_log_run_id_session_seq")),
    )
    op.create_table(
        "logs",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.Column("level", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_logs_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_logs")),
        sa.UniqueConstraint("run_id", "session", "seq", name=op.f("uq_logs_run_id_session_seq")),
    )
    op.create_table(
        "prompts",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.Column("prompt_id", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("choices", sa.JSON(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("answer_source", sa.String(length=32), nullable=True),
        sa.Column("answered_at", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_prompts_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prompts")),
        sa.UniqueConstraint(
            "run_id", "session", "prompt_id", name=op.f("uq_prompts_run_id_session_prompt_id")
        ),
    )
    op.create_table(
        "run_sessions",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.Double(), nullable=False),
        sa.Column("ended_at", sa.Double(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("labctl_version", sa.String(length=32), server_default="", nullable=False),
        sa.Column("plan_hash", sa.String(length=64), nullable=False),
        sa.Column("plan_changed", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("plan_text", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_run_sessions_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("run_id", "session", name=op.f("pk_run_sessions")),
    )
    op.create_table(
        "steps",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=False),
        sa.Column("step_id", sa.String(length=200), nullable=False),
        sa.Column("step_group", sa.String(length=16), nullable=False),
        sa.Column("check_name", sa.String(length=100), nullable=False),
        sa.Column("corner", sa.JSON(), nullable=True),
        sa.Column("corner_index", sa.Integer(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.Column("started_at", sa.Double(), nullable=False),
        sa.Column("ended_at", sa.Double(), nullable=True),
        sa.Column("duration", sa.Double(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("message", sa.Text(), server_default="", nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"], ["runs.id"], name=op.f("fk_steps_run_id_runs"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_steps")),
        sa.UniqueConstraint(
            "run_id", "session", "step_key", name=op.f("uq_steps_run_id_session_step_key")
        ),
    )
    op.create_table(
        "instruments",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("session", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("driver", sa.String(length=200), nullable=False),
        sa.Column("resource", sa.String(length=300), nullable=False),
        sa.Column("idn", sa.String(length=300), server_default="", nullable=False),
        sa.Column("asset_serial", sa.String(length=100), nullable=True),
        sa.Column("calibration_due", sa.String(length=32), nullable=True),
        sa.ForeignKeyConstraint(
            ["run_id", "session"],
            ["run_sessions.run_id", "run_sessions.session"],
            name=op.f("fk_instruments_run_id_run_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "session", "role", name=op.f("pk_instruments")),
    )
    op.create_table(
        "measurements",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("step_ref", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("value", sa.Double(), nullable=True),
        sa.Column("value_text", sa.Text(), nullable=True),
        sa.Column("unit", sa.String(length=32), server_default="", nullable=False),
        sa.Column("low", sa.Double(), nullable=True),
        sa.Column("high", sa.Double(), nullable=True),
        sa.Column("nominal", sa.Double(), nullable=True),
        sa.Column("marginal_low", sa.Double(), nullable=True),
        sa.Column("marginal_high", sa.Double(), nullable=True),
        sa.Column("limit_equals", sa.Text(), nullable=True),
        sa.Column("limit_regex", sa.Text(), nullable=True),
        sa.Column("limit_text", sa.Text(), nullable=True),
        sa.Column("verdict", sa.String(length=10), nullable=False),
        sa.Column("lane", sa.String(length=64), nullable=True),
        sa.Column("rail", sa.String(length=64), nullable=True),
        sa.Column("channel", sa.String(length=64), nullable=True),
        sa.Column("sensor", sa.String(length=64), nullable=True),
        sa.Column("labels", sa.JSON(), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["step_ref"],
            ["steps.id"],
            name=op.f("fk_measurements_step_ref_steps"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_measurements")),
        sa.UniqueConstraint("step_ref", "seq", name=op.f("uq_measurements_step_ref_seq")),
    )
    with op.batch_alter_table("measurements", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_measurements_name"), ["name"], unique=False)

    op.create_table(
        "samples",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("step_ref", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("series", sa.String(length=100), nullable=False),
        sa.Column("value", sa.Double(), nullable=False),
        sa.Column("unit", sa.String(length=32), server_default="", nullable=False),
        sa.Column("t", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["step_ref"], ["steps.id"], name=op.f("fk_samples_step_ref_steps"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_samples")),
        sa.UniqueConstraint("step_ref", "seq", name=op.f("uq_samples_step_ref_seq")),
    )
    with op.batch_alter_table("samples", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_samples_run_id_series"), ["run_id", "series"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("samples", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_samples_run_id_series"))

    op.drop_table("samples")
    with op.batch_alter_table("measurements", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_measurements_name"))

    op.drop_table("measurements")
    op.drop_table("instruments")
    op.drop_table("steps")
    op.drop_table("run_sessions")
    op.drop_table("prompts")
    op.drop_table("logs")
    op.drop_table("io_log")
    op.drop_table("instrument_errors")
    op.drop_table("attachments")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_station"))
        batch_op.drop_index(batch_op.f("ix_runs_started_at"))
        batch_op.drop_index(batch_op.f("ix_runs_plan_name"))
        batch_op.drop_index(batch_op.f("ix_runs_outcome"))
        batch_op.drop_index(batch_op.f("ix_runs_dut_serial"))

    op.drop_table("runs")
