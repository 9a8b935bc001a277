# SPDX-License-Identifier: Apache-2.0
"""Agent tokens: the secret of each node's ramdisk agent

``agent_tokens`` holds at most one token per node, issued at the agent's
first lookup and deleted when the agent's work ends (see
``ferrum.objects.agent_token``).

Revision ID: 0013
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'


def upgrade() -> None:
    op.create_table(
        'agent_tokens',
        sa.Column('node_id', sa.Integer(),
                  sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('token', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False))
