# SPDX-License-Identifier: Apache-2.0
"""Volume connectors and volume targets

A node's ``volume_connectors`` (unique by type and connector ID) and
``volume_targets`` (unique by boot index on a node), as Ironic keeps them.
Deleting a node deletes both, as Ironic's node deletion does.

Revision ID: 0017
Revises: 0016
"""

import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'


def upgrade() -> None:
    op.create_table(
        'volume_connectors',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('node_id', sa.Integer(), nullable=False),
        sa.Column('type', sa.String(length=32), nullable=False),
        sa.Column('connector_id', sa.String(length=255), nullable=False),
        sa.Column('extra', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['node_id'], ['nodes.id'],
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_volumeconnectors0uuid'),
        sa.UniqueConstraint('type', 'connector_id',
                            name='uniq_volumeconnectors0type0connector_id'))
    op.create_index('ix_volume_connectors_node_id', 'volume_connectors',
                    ['node_id'])
    op.create_table(
        'volume_targets',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('node_id', sa.Integer(), nullable=False),
        sa.Column('volume_type', sa.String(length=64), nullable=False),
        sa.Column('properties', sa.Text(), nullable=True),
        sa.Column('boot_index', sa.Integer(), nullable=False),
        sa.Column('volume_id', sa.String(length=36), nullable=False),
        sa.Column('extra', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(['node_id'], ['nodes.id'],
                                ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('uuid', name='uniq_volumetargets0uuid'),
        sa.UniqueConstraint('node_id', 'boot_index',
                            name='uniq_volumetargets0node_id0boot_index'))
    op.create_index('ix_volume_targets_node_id', 'volume_targets',
                    ['node_id'])
