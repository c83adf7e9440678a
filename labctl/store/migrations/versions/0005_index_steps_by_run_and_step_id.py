"""An index of steps by run and step id: finding the final attempt of each step (the latest
finished one of the same run, group, step id and corner) looked at every step of the run for
each step, so ``labctl runs``, ``runs show``, ``stats`` and reports took seconds to minutes
on a run of thousands of steps.

An addition (expand only): a labctl of revision 0004 works on this schema unchanged.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 09:11:10.504627
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None
change = "expand"  # labctl.store.migrate: older code keeps working on this schema


def upgrade() -> None:
    op.create_index(op.f("ix_steps_run_id_step_id"), "steps", ["run_id", "step_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_steps_run_id_step_id"), table_name="steps")
