# SPDX-License-Identifier: Apache-2.0
"""Drop the index on node_traits.trait

Nothing looks nodes up by trait alone: the allocation engine asks "has
this node that trait", which the primary key (node_id, trait) answers.
The index only ever misled PostgreSQL: before autovacuum had analyzed a
freshly enrolled fleet, the planner probed it for every candidate node
and read every node holding the trait each time (see
``ferrum.allocation.candidates``), 25 times slower than the primary key.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = '0003'
down_revision = '0002'


def upgrade() -> None:
    with op.batch_alter_table('node_traits', schema=None) as batch_op:
        batch_op.drop_index('node_traits_trait_idx')

