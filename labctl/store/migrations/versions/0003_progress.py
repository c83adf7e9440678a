"""Stored progress and re-runs: the ``progress`` table (the latest progress or wait line of
each open run, written at most twice a second) and ``runs.rerun_of`` (a run that re-ran
steps of an earlier run references it).

Both are additions (expand only): a labctl of revision 0002 ignores them, a database of
revision 0002 gains them empty (NULL).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 03:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None
change = "expand"  # labctl.store.migrate: older code keeps working on this schema


def upgrade() -> None:
    with op.batch_alter_table("runs") as batch_op:
        batch_op.add_column(sa.Column("rerun_of", sa.String(length=64), nullable=True))
        batch_op.create_index("ix_runs_rerun_of", ["rerun_of"], unique=False)
    op.create_table(
        "progress",
        sa.Column("run_id", sa.String(length=64), nullable=False),
        sa.Column("step_key", sa.String(length=300), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("fraction", sa.Double(), nullable=True),
        sa.Column("t", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name="fk_progress_run_id_runs", ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", name="pk_progress"),
    )


def downgrade() -> None:
    op.drop_table("progress")
    with op.batch_alter_table("runs") as batch_op:
        batch_op.drop_index("ix_runs_rerun_of")
        batch_op.drop_column("rerun_of")
