"""Steps: duration_sim, the simulated seconds a step took on a time-scaled bench.

Times (started_at, ended_at, t) and ``duration`` are wall-clock seconds from this revision on;
a database written before it keeps its rows as they were (``duration_sim`` NULL).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 22:45:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None
change = "expand"  # a nullable column: older code keeps working (labctl.store.migrate)


def upgrade() -> None:
    with op.batch_alter_table("steps") as batch_op:
        batch_op.add_column(sa.Column("duration_sim", sa.Double(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("steps") as batch_op:
        batch_op.drop_column("duration_sim")
