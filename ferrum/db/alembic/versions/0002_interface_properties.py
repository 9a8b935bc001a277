# SPDX-License-Identifier: Apache-2.0
"""Driver properties and declared secrets of registered interfaces

The API process does not load drivers, so each conductor registers what
``GET /v1/drivers/<name>/properties`` and the masking of ``driver_info``
need: the ``get_properties()`` and ``secret_properties`` of every interface
it enabled. Both are nullable: rows written before this revision stay valid
until their conductor restarts and registers again.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'


def upgrade() -> None:
    with op.batch_alter_table('conductor_hardware_interfaces',
                              schema=None) as batch_op:
        batch_op.add_column(sa.Column('properties', sa.Text(),
                                      nullable=True))
        batch_op.add_column(sa.Column('secret_properties', sa.Text(),
                                      nullable=True))
