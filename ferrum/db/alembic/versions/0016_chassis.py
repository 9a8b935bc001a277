# SPDX-License-Identifier: Apache-2.0
"""Chassis, and a node's chassis

``chassis`` holds Ironic's chassis (a description and ``extra``);
``nodes.chassis_id`` names a node's chassis, or none. The foreign key has
no ON DELETE: a chassis with nodes cannot be deleted.

On SQLite the column is added with its REFERENCES clause by ALTER TABLE
(which SQLite allows for a column whose default is NULL): a batch
migration would copy and drop ``nodes``, and with foreign keys on, the
drop would delete every port, trait and history row of every node.

Revision ID: 0016
Revises: 0015
"""

import sqlalchemy as sa
from alembic import op

revision = '0016'
down_revision = '0015'


def upgrade() -> None:
    op.create_table(
        'chassis',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('description', sa.String(length=255), nullable=True),
        sa.Column('extra', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_chassis0uuid'))
    if op.get_bind().dialect.name == 'sqlite':
        op.execute('ALTER TABLE nodes ADD COLUMN chassis_id INTEGER '
                   'CONSTRAINT nodes_chassis_id_fk REFERENCES chassis (id)')
        return
    op.add_column('nodes', sa.Column('chassis_id', sa.Integer(),
                                     nullable=True))
    op.create_foreign_key('nodes_chassis_id_fk', 'nodes', 'chassis',
                          ['chassis_id'], ['id'])
