# SPDX-License-Identifier: Apache-2.0
"""Initial schema: nodes, ports, traits, allocations, conductors

Revision ID: 0001
Revises: none
"""

import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None


def upgrade() -> None:
    op.create_table('conductors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('hostname', sa.String(length=255), nullable=False),
    sa.Column('conductor_group', sa.String(length=255), server_default='', nullable=False),
    sa.Column('online', sa.Boolean(), nullable=False),
    sa.Column('heartbeat_at', sa.DateTime(), nullable=False),
    sa.Column('rpc_address', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('hostname', name='uniq_conductors0hostname')
    )
    op.create_table('conductor_hardware_interfaces',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('conductor_id', sa.Integer(), nullable=False),
    sa.Column('hardware_type', sa.String(length=255), nullable=False),
    sa.Column('interface_type', sa.String(length=16), nullable=False),
    sa.Column('interface_name', sa.String(length=255), nullable=False),
    sa.Column('default', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['conductor_id'], ['conductors.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('conductor_id', 'hardware_type', 'interface_type', 'interface_name', name='uniq_conductorhardwareinterfaces0')
    )
    with op.batch_alter_table('conductor_hardware_interfaces', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_conductor_hardware_interfaces_conductor_id'), ['conductor_id'], unique=False)

    op.create_table('nodes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('driver', sa.String(length=255), nullable=False),
    sa.Column('power_interface', sa.String(length=255), nullable=True),
    sa.Column('management_interface', sa.String(length=255), nullable=True),
    sa.Column('boot_interface', sa.String(length=255), nullable=True),
    sa.Column('deploy_interface', sa.String(length=255), nullable=True),
    sa.Column('inspect_interface', sa.String(length=255), nullable=True),
    sa.Column('vendor_interface', sa.String(length=255), nullable=True),
    sa.Column('driver_info', sa.Text(), nullable=True),
    sa.Column('driver_internal_info', sa.Text(), nullable=True),
    sa.Column('properties', sa.Text(), nullable=True),
    sa.Column('instance_info', sa.Text(), nullable=True),
    sa.Column('extra', sa.Text(), nullable=True),
    sa.Column('provision_state', sa.String(length=15), nullable=False),
    sa.Column('target_provision_state', sa.String(length=15), nullable=True),
    sa.Column('provision_updated_at', sa.DateTime(), nullable=True),
    sa.Column('power_state', sa.String(length=15), nullable=True),
    sa.Column('target_power_state', sa.String(length=15), nullable=True),
    sa.Column('maintenance', sa.Boolean(), nullable=False),
    sa.Column('maintenance_reason', sa.Text(), nullable=True),
    sa.Column('fault', sa.String(length=255), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('reservation', sa.String(length=255), nullable=True),
    sa.Column('conductor_affinity', sa.Integer(), nullable=True),
    sa.Column('conductor_group', sa.String(length=255), server_default='', nullable=False),
    sa.Column('resource_class', sa.String(length=80), nullable=True),
    sa.Column('instance_uuid', sa.String(length=36), nullable=True),
    sa.Column('allocation_id', sa.Integer(), nullable=True),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('lessee', sa.String(length=255), nullable=True),
    sa.Column('clean_step', sa.Text(), nullable=True),
    sa.Column('deploy_step', sa.Text(), nullable=True),
    sa.Column('automated_clean', sa.Boolean(), nullable=True),
    sa.Column('protected', sa.Boolean(), nullable=False),
    sa.Column('protected_reason', sa.Text(), nullable=True),
    sa.Column('retired', sa.Boolean(), nullable=False),
    sa.Column('retired_reason', sa.Text(), nullable=True),
    sa.Column('inspection_started_at', sa.DateTime(), nullable=True),
    sa.Column('inspection_finished_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['conductor_affinity'], ['conductors.id'], name='nodes_conductor_affinity_fk'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('instance_uuid', name='uniq_nodes0instance_uuid'),
    sa.UniqueConstraint('name', name='uniq_nodes0name'),
    sa.UniqueConstraint('uuid', name='uniq_nodes0uuid')
    )
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.create_index('nodes_conductor_group_idx', ['conductor_group'], unique=False)
        batch_op.create_index('nodes_driver_idx', ['driver'], unique=False)
        batch_op.create_index('nodes_lessee_idx', ['lessee'], unique=False)
        batch_op.create_index('nodes_owner_idx', ['owner'], unique=False)
        batch_op.create_index('nodes_provision_state_idx', ['provision_state'], unique=False)
        batch_op.create_index('nodes_reservation_idx', ['reservation'], unique=False)
        batch_op.create_index('nodes_resource_class_idx', ['resource_class'], unique=False)

    op.create_table('allocations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('state', sa.String(length=15), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('resource_class', sa.String(length=80), nullable=True),
    sa.Column('candidate_nodes', sa.Text(), nullable=True),
    sa.Column('extra', sa.Text(), nullable=True),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('conductor_affinity', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['conductor_affinity'], ['conductors.id'], name='allocations_conductor_affinity_fk'),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_allocations0name'),
    sa.UniqueConstraint('node_id', name='uniq_allocations0node_id'),
    sa.UniqueConstraint('uuid', name='uniq_allocations0uuid')
    )
    with op.batch_alter_table('allocations', schema=None) as batch_op:
        batch_op.create_index('allocations_conductor_affinity_idx', ['conductor_affinity'], unique=False)
        batch_op.create_index('allocations_state_idx', ['state'], unique=False)

    op.create_table('node_traits',
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('node_id', 'trait')
    )
    with op.batch_alter_table('node_traits', schema=None) as batch_op:
        batch_op.create_index('node_traits_trait_idx', ['trait'], unique=False)

    op.create_table('ports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('address', sa.String(length=18), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('local_link_connection', sa.Text(), nullable=True),
    sa.Column('pxe_enabled', sa.Boolean(), nullable=False),
    sa.Column('physical_network', sa.String(length=64), nullable=True),
    sa.Column('is_smartnic', sa.Boolean(), nullable=False),
    sa.Column('extra', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('address', name='uniq_ports0address'),
    sa.UniqueConstraint('name', name='uniq_ports0name'),
    sa.UniqueConstraint('uuid', name='uniq_ports0uuid')
    )
    with op.batch_alter_table('ports', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_ports_node_id'), ['node_id'], unique=False)

    op.create_table('allocation_traits',
    sa.Column('allocation_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['allocation_id'], ['allocations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('allocation_id', 'trait')
    )
