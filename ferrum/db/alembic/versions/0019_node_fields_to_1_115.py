# SPDX-License-Identifier: Apache-2.0
"""Node fields of API versions 1.82 to 1.104: shard, parent_node,
disable_power_off, instance_name

Ironic's columns and indexes: ``shard`` (1.82) and ``parent_node`` (1.83,
the parent's UUID) are indexed because every node list filters on them
(a list leaves children out unless asked); ``instance_name`` (1.104) is a
list filter too. ``disable_power_off`` (1.95) is false for every node of
before.

Revision ID: 0019
Revises: 0018
"""

import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'


def upgrade() -> None:
    with op.batch_alter_table('nodes') as batch:
        batch.add_column(sa.Column('shard', sa.String(255), nullable=True))
        batch.add_column(sa.Column('parent_node', sa.String(36),
                                   nullable=True))
        batch.add_column(sa.Column('disable_power_off', sa.Boolean(),
                                   nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column('instance_name', sa.String(255),
                                   nullable=True))
        batch.create_index('nodes_shard_idx', ['shard'])
        batch.create_index('nodes_parent_node_idx', ['parent_node'])
        batch.create_index('nodes_instance_name_idx', ['instance_name'])
