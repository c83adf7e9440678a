"""The fleet: stations (registry and heartbeats), jobs (the queue), labctl_schema (compatibility).

Expand only: three new tables, nothing of the runs' tables changes, so a station whose labctl
knows only the previous revision keeps recording runs after ``labctl db upgrade``.

Revision ID: 0004
Revises: 0002
Create Date: 2026-12-01 03:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None
change = "expand"  # labctl.store.migrate: older code keeps working on this schema

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "stations",
        sa.Column("id", sa.String(length=200), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("owner_token", sa.String(length=64), server_default="", nullable=False),
        sa.Column("agent_id", sa.String(length=64), nullable=False),
        sa.Column("fixture_path", sa.Text(), server_default="", nullable=False),
        sa.Column("fixture_text", sa.Text(), server_default="", nullable=False),
        sa.Column("classes", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("instruments", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("calibration_due", sa.String(length=32), nullable=True),
        sa.Column("labctl_version", sa.String(length=32), server_default="", nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("current_job", sa.BigInteger(), nullable=True),
        sa.Column("current_run", sa.String(length=64), nullable=True),
        sa.Column("current_step", sa.String(length=300), nullable=True),
        sa.Column("message", sa.Text(), server_default="", nullable=False),
        sa.Column("started_at", sa.Double(), nullable=False),
        sa.Column("heartbeat_at", sa.Double(), nullable=False),
        sa.Column("heartbeat_interval", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stations")),
    )
    op.create_table(
        "jobs",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("plan_name", sa.String(length=200), nullable=False),
        sa.Column("plan_file", sa.Text(), nullable=False),
        sa.Column("plan_text", sa.Text(), nullable=False),
        sa.Column("plan_files", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("plan_sha256", sa.String(length=64), nullable=False),
        sa.Column("parameters", sa.JSON(none_as_null=True), nullable=True),
        sa.Column("dut_serial", sa.String(length=200), nullable=True),
        sa.Column("station", sa.String(length=200), nullable=True),
        sa.Column("station_class", sa.String(length=100), nullable=True),
        sa.Column("portable", sa.Boolean(), server_default="0", nullable=False),
        sa.Column("priority", sa.Integer(), server_default="0", nullable=False),
        sa.Column("submitted_at", sa.Double(), nullable=False),
        sa.Column("submitted_by", sa.String(length=200), nullable=True),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("claimed_by", sa.String(length=200), nullable=True),
        sa.Column("agent_id", sa.String(length=64), nullable=True),
        sa.Column("claimed_at", sa.Double(), nullable=True),
        sa.Column("claims", sa.Integer(), server_default="0", nullable=False),
        sa.Column("run_id", sa.String(length=64), nullable=True),
        sa.Column("ended_at", sa.Double(), nullable=True),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), server_default="", nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    op.create_index(op.f("ix_jobs_state_priority_submitted_at"), "jobs", ["state", "priority", "submitted_at"])
    op.create_index(op.f("ix_jobs_claimed_by"), "jobs", ["claimed_by"])
    op.create_table(
        "labctl_schema",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_labctl_schema")),
    )


def downgrade() -> None:
    op.drop_table("labctl_schema")
    op.drop_index(op.f("ix_jobs_claimed_by"), table_name="jobs")
    op.drop_index(op.f("ix_jobs_state_priority_submitted_at"), table_name="jobs")
    op.drop_table("jobs")
    op.drop_table("stations")
