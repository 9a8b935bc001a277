# SPDX-License-Identifier: Apache-2.0
"""Node firmware_interface and firmware_information (Ironic's API 1.86)

The firmware interface kind becomes a node field like the other kinds;
nodes enrolled before get "no-firmware", the only firmware interface there
was. ``firmware_information`` holds each node's firmware components as
last read, one row per node and component, deleted with the node.

Revision ID: 0021
Revises: 0020
"""

import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'


def upgrade() -> None:
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('firmware_interface', sa.String(255),
                                      nullable=True))
    op.execute("UPDATE nodes SET firmware_interface = 'no-firmware'")
    op.create_table(
        'firmware_information',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('node_id', sa.Integer(),
                  sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                  nullable=False),
        sa.Column('component', sa.String(255), nullable=False),
        sa.Column('initial_version', sa.String(255), nullable=False),
        sa.Column('current_version', sa.String(255), nullable=True),
        sa.Column('last_version_flashed', sa.String(255), nullable=True),
        sa.Column('vendor', sa.String(255), nullable=True),
        sa.Column('model', sa.String(255), nullable=True),
        sa.Column('serial_number', sa.String(255), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.UniqueConstraint('node_id', 'component',
                            name='uniq_nodecomponent0node_id0component'),
    )
