# SPDX-License-Identifier: Apache-2.0
"""Placement consumers to release (the placement allocation backend)

``placement_releases`` holds the consumers whose allocation was deleted
(or failed while Placement was away), written in that transaction and
deleted once Placement let go of them (see ferrum/placement/consumers.py).
Only the placement backend writes it, so switching backends needs no
migration of its own.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'


def upgrade() -> None:
    op.create_table(
        'placement_releases',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('consumer_uuid', sa.String(36), nullable=False),
        sa.Column('node_uuid', sa.String(36), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False))
    op.create_index('ix_placement_releases_consumer_uuid',
                    'placement_releases', ['consumer_uuid'])
