# SPDX-License-Identifier: Apache-2.0
"""Events: node history (Ironic's API 1.78) and the event feed

``events`` holds a node's history entries and the allocation and lease
events of ``GET /v1/events``; ``event_counter`` hands out their ids in
commit order (see ``ferrum.objects.event``). Its one row starts at 0.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'

_BIG = sa.BigInteger().with_variant(sa.Integer(), 'sqlite')


def upgrade() -> None:
    op.create_table(
        'events',
        sa.Column('id', _BIG, primary_key=True, autoincrement=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('node_id', sa.Integer(),
                  sa.ForeignKey('nodes.id', ondelete='SET NULL'),
                  nullable=True),
        sa.Column('node_uuid', sa.String(36), nullable=True),
        sa.Column('allocation_uuid', sa.String(36), nullable=True),
        sa.Column('lease_uuid', sa.String(36), nullable=True),
        sa.Column('owner', sa.String(255), nullable=True),
        sa.Column('lessee', sa.String(255), nullable=True),
        sa.Column('conductor', sa.String(255), nullable=True),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('event_type', sa.String(255), nullable=False),
        sa.Column('severity', sa.String(255), nullable=False),
        sa.Column('event', sa.Text(), nullable=False),
        sa.Column('state', sa.String(255), nullable=True),
        sa.Column('target_provision_state', sa.String(255), nullable=True),
        sa.Column('duration_seconds', sa.Integer(), nullable=True),
    )
    op.create_index('events_node_idx', 'events', ['node_id', 'id'])
    counter = op.create_table(
        'event_counter',
        sa.Column('id', sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column('last_id', _BIG, nullable=False),
    )
    op.bulk_insert(counter, [{'id': 1, 'last_id': 0}])
