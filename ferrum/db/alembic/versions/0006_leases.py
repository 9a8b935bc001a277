# SPDX-License-Identifier: Apache-2.0
"""Leases and their nodes, with overlap excluded by the database

``leases`` holds time-bound reservations; ``lease_nodes`` one row per node
and window. On PostgreSQL an exclusion constraint (``btree_gist``) makes
two holding rows of one node over overlapping ``[start_at, block_end)``
impossible; on SQLite the check and the insert share one ``BEGIN
IMMEDIATE`` transaction (see ``ferrum.objects.lease``). The timestamps are
naive UTC, as everywhere in ferrum, so the range is a ``tsrange``.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'


def upgrade() -> None:
    op.create_table(
        'leases',
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=True),
        sa.Column('project', sa.String(255), nullable=False),
        sa.Column('owner', sa.String(255), nullable=True),
        sa.Column('resource_class', sa.String(80), nullable=True),
        sa.Column('traits', sa.Text(), nullable=True),
        sa.Column('candidate_nodes', sa.Text(), nullable=True),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.Column('start_at', sa.DateTime(), nullable=False),
        sa.Column('end_at', sa.DateTime(), nullable=False),
        sa.Column('cleaning_margin', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(15), nullable=False),
        sa.Column('before_end_at', sa.DateTime(), nullable=True),
        sa.Column('before_end_fired_at', sa.DateTime(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('extra', sa.Text(), nullable=True),
        sa.Column('conductor_affinity', sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(['conductor_affinity'], ['conductors.id'],
                                name='leases_conductor_affinity_fk'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_leases0uuid'))
    op.create_index('leases_status_idx', 'leases', ['status'])
    op.create_index('leases_project_idx', 'leases', ['project'])
    op.create_table(
        'lease_nodes',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('lease_id', sa.Integer(), nullable=False),
        sa.Column('node_id', sa.Integer(), nullable=False),
        sa.Column('project', sa.String(255), nullable=False),
        sa.Column('start_at', sa.DateTime(), nullable=False),
        sa.Column('end_at', sa.DateTime(), nullable=False),
        sa.Column('block_end', sa.DateTime(), nullable=False),
        sa.Column('holding', sa.Boolean(), nullable=False),
        sa.Column('node_extra', sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(['lease_id'], ['leases.id'],
                                ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['node_id'], ['nodes.id'],
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'))
    op.create_index('lease_nodes_node_idx', 'lease_nodes',
                    ['node_id', 'start_at'])
    op.create_index('lease_nodes_lease_idx', 'lease_nodes', ['lease_id'])
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('CREATE EXTENSION IF NOT EXISTS btree_gist')
        op.execute(
            "ALTER TABLE lease_nodes ADD CONSTRAINT lease_nodes_no_overlap "
            "EXCLUDE USING gist (node_id WITH =, "
            "tsrange(start_at, block_end, '[)') WITH &&) WHERE (holding)")
