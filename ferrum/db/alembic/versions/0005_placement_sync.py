# SPDX-License-Identifier: Apache-2.0
"""Placement sync: the change outbox and the per-node provider record

``placement_outbox`` holds the nodes whose resource provider may need a
push, written in the node change's own transaction; ``placement_providers``
what ferrum last wrote to each provider, ``placement_status`` each
conductor's view of Placement (see ferrum/placement/).

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'


def upgrade() -> None:
    op.create_table(
        'placement_outbox',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('node_uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('claimed_by', sa.String(255), nullable=True),
        sa.Column('claimed_at', sa.DateTime(), nullable=True))
    op.create_index('placement_outbox_node_uuid_idx', 'placement_outbox',
                    ['node_uuid'])
    op.create_table(
        'placement_providers',
        sa.Column('node_uuid', sa.String(36), primary_key=True),
        sa.Column('generation', sa.Integer(), nullable=True),
        sa.Column('resource_class', sa.String(255), nullable=True),
        sa.Column('reserved', sa.Integer(), nullable=True),
        sa.Column('traits', sa.Text(), nullable=True),
        sa.Column('state', sa.String(15), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=False))
    op.create_table(
        'placement_status',
        sa.Column('host', sa.String(255), primary_key=True),
        sa.Column('state', sa.String(15), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('since', sa.DateTime(), nullable=False))
