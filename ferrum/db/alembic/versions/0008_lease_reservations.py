# SPDX-License-Identifier: Apache-2.0
"""Leases in Placement: reservation classes and their inventories

``leases.placement_class`` is true while the lease's class
``CUSTOM_RESERVATION_<UUID>`` may exist in Placement: set when the lease
is created with ``[placement]`` configured, cleared once the class is
deleted after the lease's end. ``placement_providers`` remembers the
reservation inventory ferrum last wrote to each node's provider, next to
its resource class (see ferrum/placement/reservations.py).

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'


def upgrade() -> None:
    with op.batch_alter_table('leases') as batch:
        batch.add_column(sa.Column('placement_class', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.false()))
    with op.batch_alter_table('placement_providers') as batch:
        batch.add_column(sa.Column('reservation', sa.String(255),
                                   nullable=True))
        batch.add_column(sa.Column('reservation_reserved', sa.Integer(),
                                   nullable=True))
