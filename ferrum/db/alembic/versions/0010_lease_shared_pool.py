# SPDX-License-Identifier: Apache-2.0
"""Leases booked by a project: whether the shared pool counts

``leases.shared_pool`` is true when a lease confined to its ``owner``'s
nodes may also hold nodes without an owner (the operator's shared pool).
A project-scoped caller's lease is confined so (``baremetal:lease:create
:shared_pool`` decides the pool), and the lease engine keeps to it when it
replaces a node at the lease's start. Leases of before: false, as they
were (the owner's nodes only, when an owner was given).

Revision ID: 0010
Revises: 0009
"""

import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'


def upgrade() -> None:
    with op.batch_alter_table('leases') as batch:
        batch.add_column(sa.Column('shared_pool', sa.Boolean(),
                                   nullable=False,
                                   server_default=sa.false()))
