# SPDX-License-Identifier: Apache-2.0
"""Lease nodes: whether the lease's start gave the node to its project

``lease_nodes.given`` is true once a lease's start made the node's
``lessee`` its project. The end needs it because it takes the rights away
first: it clears the lessee before it undeploys and cleans the node, so
that a lessee that keeps the node from coming back (protected, in
maintenance, redeployed) keeps no rights on it meanwhile. The row then
still holds the node until it is given back, and ``given`` tells a node
the end took away from one the start never got. Rows of before: given
where they hold a node whose lessee is their project, as the end judged
them until now.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'


def upgrade() -> None:
    with op.batch_alter_table('lease_nodes') as batch:
        batch.add_column(sa.Column('given', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    rows = sa.table('lease_nodes', sa.column('node_id'), sa.column('project'),
                    sa.column('holding'), sa.column('given'))
    nodes = sa.table('nodes', sa.column('id'), sa.column('lessee'))
    op.execute(rows.update().where(
        rows.c.holding, sa.select(nodes.c.id).where(
            nodes.c.id == rows.c.node_id,
            nodes.c.lessee == rows.c.project).exists()).values(given=True))
