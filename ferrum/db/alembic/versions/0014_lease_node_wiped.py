# SPDX-License-Identifier: Apache-2.0
"""Lease nodes: whether the lease's end had the node cleaned

``lease_nodes.wiped`` is true once a lease's end started the automated
cleaning of the node (its undeploy, whose tear-down cleans, or a
``manage`` and ``provide`` of a node that is available): the end gives
the node back only then, so that what the lessee wrote to its disks is
erased before anyone else gets it, even on a node that looks unused.
Rows of before: false, so an end under way cleans its nodes once more
before they go back (the safe side: one cleaning too many).

Revision ID: 0014
Revises: 0013
"""

import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'


def upgrade() -> None:
    with op.batch_alter_table('lease_nodes') as batch:
        batch.add_column(sa.Column('wiped', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
