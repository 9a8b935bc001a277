# SPDX-License-Identifier: Apache-2.0
"""Deploy templates (Ironic's API 1.55)

``deploy_templates`` holds each template's trait name (unique), its
deploy steps as one JSON list and its ``extra``. A new table: nothing
existing changes, and a release before this one ignores it.

Revision ID: 0020
Revises: 0019
"""

import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'


def upgrade() -> None:
    op.create_table(
        'deploy_templates',
        sa.Column('id', sa.Integer(), primary_key=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('steps', sa.Text(), nullable=False),
        sa.Column('extra', sa.Text(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.UniqueConstraint('uuid', name='uniq_deploytemplates0uuid'),
        sa.UniqueConstraint('name', name='uniq_deploytemplates0name'),
    )
