# SPDX-License-Identifier: Apache-2.0
"""Node network_interface and port internal_info, for VIFs

The network interface kind (API 1.20) becomes a node field like the other
kinds; nodes enrolled before get "noop", the only network interface there
was. A port's ``internal_info`` (API 1.18) is where an attached VIF is
recorded (``tenant_vif_port_id``), as in Ironic.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'


def upgrade() -> None:
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('network_interface', sa.String(255),
                                      nullable=True))
    op.execute("UPDATE nodes SET network_interface = 'noop'")
    with op.batch_alter_table('ports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('internal_info', sa.Text(),
                                      nullable=True))
