# SPDX-License-Identifier: Apache-2.0
"""Leases in Placement: whether the lease's class was created

``leases.class_created`` is true once ferrum created the lease's class
``CUSTOM_RESERVATION_<UUID>`` in Placement (at the lease's creation, or
at its start when Placement was away then), and false again once the
class is deleted. The API shows ``reservation_class`` only while it is
true, so a client that reads the field can name the class in a flavor.

Leases of before: a lease that started has its class (its start created
it, and ``placement_class`` is cleared once the class goes); for one
that did not start yet ferrum cannot tell, so it waits for its start
(or the engine's next run) like a lease booked while Placement was away.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'


def upgrade() -> None:
    with op.batch_alter_table('leases') as batch:
        batch.add_column(sa.Column('class_created', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.false()))
    leases = sa.table('leases', sa.column('placement_class', sa.Boolean()),
                      sa.column('status', sa.String(15)),
                      sa.column('class_created', sa.Boolean()))
    op.execute(leases.update().where(
        leases.c.placement_class.is_(True),
        leases.c.status.in_(('active', 'ending', 'ended'))).values(
            class_created=True))
