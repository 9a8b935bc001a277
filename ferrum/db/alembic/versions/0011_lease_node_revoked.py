# SPDX-License-Identifier: Apache-2.0
"""Lease nodes: whether the lease's end took the project's rights away

``lease_nodes.revoked`` is true once a lease's end cleared the node's
``lessee`` (its project's), which it does first, before it undeploys and
cleans the node: a lessee that keeps the node from coming back (protected,
in maintenance, redeployed) keeps no rights on it meanwhile. The row then
still holds the node until it is given back; ``revoked`` is how the end
knows that the node with no lessee was the lease's, and not one its start
never got. Rows of before: false (their ending leases, if any, clear the
lessee at their next run, as new ones do).

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'


def upgrade() -> None:
    with op.batch_alter_table('lease_nodes') as batch:
        batch.add_column(sa.Column('revoked', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
