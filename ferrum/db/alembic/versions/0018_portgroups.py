# SPDX-License-Identifier: Apache-2.0
"""Port groups, a port's group, and the port fields of API 1.97 to 1.111

``portgroups`` holds Ironic's port groups (API 1.23): a node's bond of
ports, with its own MAC address, mode and properties. A port names its
group with ``portgroup_id``; the key has no ON DELETE, so the database
refuses to drop a group that still has ports. A node's deletion takes its
ports and its groups with it. Ports also gain ``description`` (1.97),
``vendor`` (1.100), ``category`` (1.101) and
``available_for_dynamic_portgroup`` (1.111, true for existing ports, as in
Ironic).

Revision ID: 0018
Revises: 0017
"""

import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'


def upgrade() -> None:
    op.create_table(
        'portgroups',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('node_id', sa.Integer(), nullable=False),
        sa.Column('address', sa.String(length=18), nullable=True),
        sa.Column('extra', sa.Text(), nullable=True),
        sa.Column('internal_info', sa.Text(), nullable=True),
        sa.Column('standalone_ports_supported', sa.Boolean(),
                  nullable=False),
        sa.Column('mode', sa.String(length=255), nullable=True),
        sa.Column('properties', sa.Text(), nullable=True),
        sa.Column('physical_network', sa.String(length=64), nullable=True),
        sa.Column('category', sa.String(length=80), nullable=True),
        sa.Column('dynamic_portgroup', sa.Boolean(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['node_id'], ['nodes.id'],
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('address', name='uniq_portgroups0address'),
        sa.UniqueConstraint('name', name='uniq_portgroups0name'),
        sa.UniqueConstraint('uuid', name='uniq_portgroups0uuid'))
    op.create_index('ix_portgroups_node_id', 'portgroups', ['node_id'])
    with op.batch_alter_table('ports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('portgroup_id', sa.Integer(),
                                      nullable=True))
        batch_op.add_column(sa.Column('description', sa.String(255),
                                      nullable=True))
        batch_op.add_column(sa.Column('vendor', sa.String(32),
                                      nullable=True))
        batch_op.add_column(sa.Column('category', sa.String(80),
                                      nullable=True))
        batch_op.add_column(sa.Column(
            'available_for_dynamic_portgroup', sa.Boolean(),
            server_default=sa.true(), nullable=False))
        batch_op.create_foreign_key('ports_portgroup_id_fkey', 'portgroups',
                                    ['portgroup_id'], ['id'])
        batch_op.create_index('ix_ports_portgroup_id', ['portgroup_id'])
