# SPDX-License-Identifier: Apache-2.0
"""SQLAlchemy models: the tables only, with their indexes and constraints.

The objects in :mod:`ferrum.objects` own the queries; they use these tables
through SQLAlchemy Core. Changing a model needs an Alembic migration, and
``tests/functional/db/test_migrations.py`` fails when the two differ.
"""

import datetime
import json
from typing import Any

import sqlalchemy as sa
from sqlalchemy import orm


class JSONEncoded(sa.types.TypeDecorator[Any]):
    """JSON stored as text: the same on SQLite, PostgreSQL and MySQL."""

    impl = sa.Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Any) -> str | None:
        return None if value is None else json.dumps(value)

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return None if value is None else json.loads(value)


class Base(orm.DeclarativeBase):
    pass


def table(model: type[Base]) -> sa.Table:
    """A model's table, for Core queries. Typed as such: mypy knows
    ``Model.__table__`` only as a ``FromClause``."""
    found = model.__table__
    assert isinstance(found, sa.Table)
    return found


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


class TimestampMixin:
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, default=_now, nullable=False)
    updated_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        sa.DateTime, onupdate=_now)


class Conductor(TimestampMixin, Base):
    __tablename__ = 'conductors'
    __table_args__ = (
        sa.UniqueConstraint('hostname', name='uniq_conductors0hostname'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    hostname: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    conductor_group: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), server_default='', default='')
    online: orm.Mapped[bool] = orm.mapped_column(sa.Boolean, default=True)
    heartbeat_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, default=_now)
    rpc_address: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))


class ConductorHardwareInterface(TimestampMixin, Base):
    __tablename__ = 'conductor_hardware_interfaces'
    __table_args__ = (
        sa.UniqueConstraint(
            'conductor_id', 'hardware_type', 'interface_type',
            'interface_name', name='uniq_conductorhardwareinterfaces0'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    conductor_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('conductors.id', ondelete='CASCADE'), index=True)
    hardware_type: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    interface_type: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    interface_name: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    default: orm.Mapped[bool] = orm.mapped_column(sa.Boolean, default=False)
    #: driver_info key -> description (the interface's get_properties()).
    properties: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    #: Sorted driver_info keys the API never shows (secret_properties).
    secret_properties: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)


class Chassis(TimestampMixin, Base):
    """A group of nodes (Ironic's chassis): a description and extra."""

    __tablename__ = 'chassis'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_chassis0uuid'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    description: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)


class Node(TimestampMixin, Base):
    __tablename__ = 'nodes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_nodes0uuid'),
        sa.UniqueConstraint('name', name='uniq_nodes0name'),
        sa.UniqueConstraint('instance_uuid', name='uniq_nodes0instance_uuid'),
        sa.Index('nodes_provision_state_idx', 'provision_state'),
        sa.Index('nodes_resource_class_idx', 'resource_class'),
        sa.Index('nodes_reservation_idx', 'reservation'),
        sa.Index('nodes_conductor_group_idx', 'conductor_group'),
        sa.Index('nodes_owner_idx', 'owner'),
        sa.Index('nodes_lessee_idx', 'lessee'),
        sa.Index('nodes_driver_idx', 'driver'),
        sa.Index('nodes_shard_idx', 'shard'),
        sa.Index('nodes_parent_node_idx', 'parent_node'),
        sa.Index('nodes_instance_name_idx', 'instance_name'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    name: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    description: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    driver: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    power_interface: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    management_interface: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    boot_interface: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    deploy_interface: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    inspect_interface: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    vendor_interface: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    network_interface: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    firmware_interface: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    driver_info: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)
    driver_internal_info: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)
    properties: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    instance_info: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    provision_state: orm.Mapped[str] = orm.mapped_column(sa.String(15))
    target_provision_state: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(15))
    provision_updated_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(sa.DateTime))
    power_state: orm.Mapped[str | None] = orm.mapped_column(sa.String(15))
    target_power_state: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(15))
    maintenance: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False)
    maintenance_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    fault: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    last_error: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    reservation: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    conductor_affinity: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('conductors.id', name='nodes_conductor_affinity_fk'))
    conductor_group: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), server_default='', default='')
    resource_class: orm.Mapped[str | None] = orm.mapped_column(sa.String(80))
    instance_uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    allocation_id: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    owner: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    lessee: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    clean_step: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    deploy_step: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)
    automated_clean: orm.Mapped[bool | None] = orm.mapped_column(sa.Boolean)
    protected: orm.Mapped[bool] = orm.mapped_column(sa.Boolean, default=False)
    protected_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    retired: orm.Mapped[bool] = orm.mapped_column(sa.Boolean, default=False)
    retired_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    inspection_started_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(sa.DateTime))
    inspection_finished_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(sa.DateTime))
    #: No ON DELETE: a chassis that still holds nodes cannot be deleted
    #: (Ironic's ChassisNotEmpty), whichever process adds the node.
    chassis_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('chassis.id', name='nodes_chassis_id_fk'),
        nullable=True)
    #: API 1.82: the partition a nova-compute (or any client) serves.
    shard: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    #: API 1.83: the UUID of the node this one is a part of.
    parent_node: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    #: API 1.95: the node must never be powered off.
    disable_power_off: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())
    #: API 1.104: the instance's name, as its user knows it.
    instance_name: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))


class FirmwareComponent(TimestampMixin, Base):
    """One firmware component of a node, as last read (API 1.86)."""

    __tablename__ = 'firmware_information'
    __table_args__ = (
        sa.UniqueConstraint('node_id', 'component',
                            name='uniq_nodecomponent0node_id0component'),)

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'))
    component: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    initial_version: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    current_version: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    last_version_flashed: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    vendor: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    model: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    serial_number: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))


class NodeTrait(Base):
    __tablename__ = 'node_traits'
    # No index on trait alone: see migration 0003.

    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'), primary_key=True)
    trait: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, default=_now)


class AgentToken(Base):
    """The secret a node's ramdisk agent proves itself with (Ironic's
    ``agent_secret_token``), in a table of its own: never part of a node
    row, so no node view, history entry, event or RPC answer carries it,
    and issuing it (an INSERT that only one lookup wins) takes no node
    lock."""

    __tablename__ = 'agent_tokens'

    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'), primary_key=True)
    token: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, default=_now)


class Port(TimestampMixin, Base):
    __tablename__ = 'ports'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_ports0uuid'),
        sa.UniqueConstraint('address', name='uniq_ports0address'),
        sa.UniqueConstraint('name', name='uniq_ports0name'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    name: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    address: orm.Mapped[str] = orm.mapped_column(sa.String(18))
    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'), index=True)
    local_link_connection: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)
    pxe_enabled: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=True)
    physical_network: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(64))
    is_smartnic: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False)
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    internal_info: orm.Mapped[Any] = orm.mapped_column(JSONEncoded,
                                                       nullable=True)
    # No ON DELETE: a group with ports cannot be deleted (the API says so
    # first); a node's deletion takes both its ports and its groups.
    portgroup_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('portgroups.id'), index=True)
    description: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    vendor: orm.Mapped[str | None] = orm.mapped_column(sa.String(32))
    category: orm.Mapped[str | None] = orm.mapped_column(sa.String(80))
    available_for_dynamic_portgroup: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=True, server_default=sa.true())


class Portgroup(TimestampMixin, Base):
    __tablename__ = 'portgroups'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_portgroups0uuid'),
        sa.UniqueConstraint('address', name='uniq_portgroups0address'),
        sa.UniqueConstraint('name', name='uniq_portgroups0name'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    name: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'), index=True)
    address: orm.Mapped[str | None] = orm.mapped_column(sa.String(18))
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    internal_info: orm.Mapped[Any] = orm.mapped_column(JSONEncoded,
                                                       nullable=True)
    standalone_ports_supported: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=True)
    mode: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    properties: orm.Mapped[Any] = orm.mapped_column(JSONEncoded,
                                                    nullable=True)
    physical_network: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(64))
    category: orm.Mapped[str | None] = orm.mapped_column(sa.String(80))
    dynamic_portgroup: orm.Mapped[bool | None] = orm.mapped_column(
        sa.Boolean, default=False)


class VolumeConnector(TimestampMixin, Base):
    """How a node reaches its volumes (an iSCSI initiator name, a WWPN).

    Deleting the node deletes its connectors, as Ironic's node deletion
    does.
    """

    __tablename__ = 'volume_connectors'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_volumeconnectors0uuid'),
        sa.UniqueConstraint('type', 'connector_id',
                            name='uniq_volumeconnectors0type0connector_id'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'), index=True)
    type: orm.Mapped[str] = orm.mapped_column(sa.String(32))
    connector_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)


class VolumeTarget(TimestampMixin, Base):
    """A volume a node may boot from, by its boot index (one per index).

    Deleting the node deletes its targets, as Ironic's node deletion does.
    """

    __tablename__ = 'volume_targets'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_volumetargets0uuid'),
        sa.UniqueConstraint('node_id', 'boot_index',
                            name='uniq_volumetargets0node_id0boot_index'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'), index=True)
    volume_type: orm.Mapped[str] = orm.mapped_column(sa.String(64))
    properties: orm.Mapped[Any] = orm.mapped_column(JSONEncoded,
                                                    nullable=True)
    boot_index: orm.Mapped[int] = orm.mapped_column(sa.Integer)
    volume_id: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)


class Allocation(TimestampMixin, Base):
    __tablename__ = 'allocations'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_allocations0uuid'),
        sa.UniqueConstraint('name', name='uniq_allocations0name'),
        # A node holds at most one allocation: the database, not Python,
        # is what stops a double allocation.
        sa.UniqueConstraint('node_id', name='uniq_allocations0node_id'),
        sa.Index('allocations_state_idx', 'state'),
        sa.Index('allocations_conductor_affinity_idx', 'conductor_affinity'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    name: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    node_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='SET NULL'))
    state: orm.Mapped[str] = orm.mapped_column(sa.String(15))
    last_error: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    resource_class: orm.Mapped[str | None] = orm.mapped_column(sa.String(80))
    candidate_nodes: orm.Mapped[Any] = orm.mapped_column(
        JSONEncoded, nullable=True)
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    owner: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    conductor_affinity: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('conductors.id',
                      name='allocations_conductor_affinity_fk'))


class DeployTemplate(TimestampMixin, Base):
    """Deploy steps for the nodes deployed with the trait ``name`` among
    their instance traits (API 1.55). The steps are one JSON list, not
    rows of their own as in Ironic: they are only ever read and written
    with their template."""

    __tablename__ = 'deploy_templates'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_deploytemplates0uuid'),
        sa.UniqueConstraint('name', name='uniq_deploytemplates0name'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    #: [{interface, step, args, priority}], as validated by the API.
    steps: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=False)
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)


class AllocationTrait(Base):
    __tablename__ = 'allocation_traits'

    allocation_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('allocations.id', ondelete='CASCADE'), primary_key=True)
    trait: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, default=_now)


class PlacementOutbox(Base):
    """A node whose resource provider may need a push to Placement.

    Written in the same transaction as the node change (see
    :mod:`ferrum.placement.outbox`); deleted once a conductor pushed the
    node's state. No foreign key: a deleted node's row is what deletes its
    provider.
    """

    __tablename__ = 'placement_outbox'
    __table_args__ = (
        sa.Index('placement_outbox_node_uuid_idx', 'node_uuid'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    node_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, nullable=False)
    claimed_by: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    claimed_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        sa.DateTime)


class PlacementProvider(Base):
    """What ferrum last wrote to (or found in) a node's resource provider."""

    __tablename__ = 'placement_providers'

    node_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36),
                                                   primary_key=True)
    generation: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    resource_class: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    reserved: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    #: The reservation class of the lease holding the node, and its
    #: reserved value, as last written.
    reservation: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    reservation_reserved: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer)
    #: The traits ferrum set (the node's and the marker): the only ones it
    #: ever removes.
    traits: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    #: synced, conflict (a refusal ferrum does not retry) or clash (the
    #: provider is another service's).
    state: orm.Mapped[str] = orm.mapped_column(sa.String(15))
    last_error: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    updated_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, nullable=False)


class PlacementRelease(Base):
    """A Placement consumer to delete: an allocation's, written in the
    transaction that deleted the allocation (see
    :mod:`ferrum.placement.releases`); deleted once Placement let go."""

    __tablename__ = 'placement_releases'

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    consumer_uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36),
                                                       index=True)
    #: The node the allocation held: its provider is pushed before the
    #: consumer goes, so a node still cleaning is reserved first.
    node_uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, nullable=False)


class PlacementStatus(Base):
    """Each conductor's view of Placement, written when it changes."""

    __tablename__ = 'placement_status'

    host: orm.Mapped[str] = orm.mapped_column(sa.String(255),
                                              primary_key=True)
    #: ok, unavailable (down, failing or refusing credentials) or too_old.
    state: orm.Mapped[str] = orm.mapped_column(sa.String(15))
    last_error: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    since: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, nullable=False)


class Lease(TimestampMixin, Base):
    """A time-bound reservation of nodes (see :mod:`ferrum.leases`)."""

    __tablename__ = 'leases'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_leases0uuid'),
        sa.Index('leases_status_idx', 'status'),
        sa.Index('leases_project_idx', 'project'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    name: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    project: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    owner: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    resource_class: orm.Mapped[str | None] = orm.mapped_column(sa.String(80))
    traits: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    candidate_nodes: orm.Mapped[Any] = orm.mapped_column(JSONEncoded,
                                                         nullable=True)
    count: orm.Mapped[int] = orm.mapped_column(sa.Integer)
    start_at: orm.Mapped[datetime.datetime] = orm.mapped_column(sa.DateTime)
    end_at: orm.Mapped[datetime.datetime] = orm.mapped_column(sa.DateTime)
    #: Seconds after end_at the nodes stay blocked ([lease] cleaning_margin
    #: when the lease was created).
    cleaning_margin: orm.Mapped[int] = orm.mapped_column(sa.Integer)
    status: orm.Mapped[str] = orm.mapped_column(sa.String(15))
    before_end_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        sa.DateTime)
    before_end_fired_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(sa.DateTime))
    last_error: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded, nullable=True)
    #: The conductor running the lease's transition (starting, ending).
    conductor_affinity: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('conductors.id', name='leases_conductor_affinity_fk'))
    #: The lease's class CUSTOM_RESERVATION_<UUID> may exist in Placement
    #: (created with the lease, cleared once deleted after its end).
    placement_class: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())
    #: ferrum created that class (with the lease, or at its start if
    #: Placement was away then) and has not deleted it: the API shows
    #: ``reservation_class`` only then.
    class_created: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())
    #: With an owner: nodes without an owner may be held too (a project's
    #: lease from its own nodes and the operator's shared pool).
    shared_pool: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())


class LeaseNode(Base):
    """One node of a lease over its window.

    ``block_end`` is the lease's end plus its cleaning margin, stored
    because ``timestamp + interval`` cannot sit in PostgreSQL's exclusion
    constraint, which migration 0006 adds on ``(node_id, [start_at,
    block_end))`` for rows that are ``holding``. ``project`` repeats the
    lease's, so the allocation filter needs no join.
    """

    __tablename__ = 'lease_nodes'
    __table_args__ = (
        sa.Index('lease_nodes_node_idx', 'node_id', 'start_at'),
        sa.Index('lease_nodes_lease_idx', 'lease_id'),
    )

    id: orm.Mapped[int] = orm.mapped_column(primary_key=True)
    lease_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('leases.id', ondelete='CASCADE'))
    node_id: orm.Mapped[int] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='CASCADE'))
    project: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    start_at: orm.Mapped[datetime.datetime] = orm.mapped_column(sa.DateTime)
    end_at: orm.Mapped[datetime.datetime] = orm.mapped_column(sa.DateTime)
    block_end: orm.Mapped[datetime.datetime] = orm.mapped_column(sa.DateTime)
    #: True while the lease holds the node (any status but ended and
    #: cancelled, until the node is back); only holding rows may not
    #: overlap.
    holding: orm.Mapped[bool] = orm.mapped_column(sa.Boolean, default=True)
    #: The node's extra when the lease started, restored at its end.
    node_extra: orm.Mapped[Any] = orm.mapped_column(JSONEncoded,
                                                    nullable=True)
    #: The lease's start made the node's lessee its project (migration
    #: 0011): the end, which clears the lessee first, still gives it back.
    given: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())
    #: The lease's end started the node's automated cleaning (migration
    #: 0014): it gives the node back only once this is set and the node is
    #: available again.
    wiped: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())


class Event(Base):
    """One recorded event: a node's history entry (Ironic's
    ``node_history``, API 1.78) or an allocation's or a lease's event.

    Written in the transaction of the change it records
    (:mod:`ferrum.objects.event`). On PostgreSQL ``id`` comes from a
    sequence at the end of that transaction, under a shared lock held to
    the commit, so the feed's reader can wait for every id it hands out
    to be committed (``GET /v1/events?since=`` relies on it); on SQLite
    it is the rowid, given in commit order by the one writer. ``owner``
    and ``lessee`` are the projects that may read the event in the feed,
    as they were when it happened. ``node_id`` is set to NULL when the
    node is deleted: the feed keeps the event, the node's history goes
    with the node.
    """

    __tablename__ = 'events'
    # Two indexes only (every node write that changes a state inserts a
    # row): the feed reads by id, a node's history by (node_id, id). An
    # entry is found by its uuid among its node's; the cleanup goes
    # through ids in order, which is the order of time.
    __table_args__ = (
        sa.Index('events_node_idx', 'node_id', 'id'),
    )

    # SQLite gives the rowid (and ignores the sequence); PostgreSQL the
    # next value of events_id_seq (migration 0015).
    id: orm.Mapped[int] = orm.mapped_column(
        sa.BigInteger().with_variant(sa.Integer(), 'sqlite'),
        sa.Sequence('events_id_seq'), primary_key=True)
    uuid: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        sa.DateTime, nullable=False)
    node_id: orm.Mapped[int | None] = orm.mapped_column(
        sa.ForeignKey('nodes.id', ondelete='SET NULL'), nullable=True)
    node_uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    allocation_uuid: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))
    lease_uuid: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    owner: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    lessee: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    conductor: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    user_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    project_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    event_type: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    severity: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    event: orm.Mapped[str] = orm.mapped_column(sa.Text)
    state: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    target_provision_state: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    duration_seconds: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)

