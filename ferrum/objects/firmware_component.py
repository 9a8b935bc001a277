# SPDX-License-Identifier: Apache-2.0
"""A node's firmware components (``firmware_information``, API 1.86).

One row per node and component, written only by :func:`record`, with
Ironic's rule for what a new reading changes: a component seen for the
first time keeps its version as ``initial_version`` for good; a version
that differs from the recorded one becomes both ``current_version`` and
``last_version_flashed``; a component no longer reported keeps its row.
"""

from collections.abc import Sequence
from typing import Any, Protocol

import sqlalchemy as sa

from ferrum.db import api as db_api
from ferrum.db import models
from ferrum.objects import base

TABLE = models.table(models.FirmwareComponent)
#: What the API shows, in Ironic's order.
FIELDS: tuple[str, ...] = (
    'component', 'initial_version', 'current_version',
    'last_version_flashed', 'vendor', 'model', 'serial_number',
    'created_at', 'updated_at')
_COLUMNS = [TABLE.c[name] for name in ('id',) + FIELDS]
_OF_NODE = sa.select(*_COLUMNS).where(
    TABLE.c.node_id == sa.bindparam('b_node')).order_by(TABLE.c.component)
_IDENTITY = ('vendor', 'model', 'serial_number')


class Reading(Protocol):
    """One component as read from the hardware (the driver contract's
    :class:`ferrum.drivers.base.FirmwareComponent`)."""

    @property
    def component(self) -> str: ...
    @property
    def current_version(self) -> str: ...
    @property
    def vendor(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def serial_number(self) -> str | None: ...


def list_for_node(db: db_api.Database, node_id: int) -> list[dict[str, Any]]:
    """The node's components, by name, each a dict of :data:`FIELDS`."""
    with db.reader() as conn:
        rows = conn.execute(_OF_NODE, {'b_node': node_id}).all()
    return [dict(zip(FIELDS, row[1:], strict=True)) for row in rows]


def _changes(old: Any, new: Reading) -> dict[str, Any]:
    """The columns a reading changes on a recorded component (Ironic's
    ``sync_firmware_components`` and its save): empty when nothing does."""
    identity = {name: getattr(new, name) for name in _IDENTITY}
    flashed = (old.last_version_flashed is not None
               and new.current_version != old.last_version_flashed)
    if (new.current_version == old.current_version and not flashed
            and all(getattr(old, name) == value
                    for name, value in identity.items())):
        return {}
    values = dict(identity)
    if new.current_version != old.current_version:
        values.update(current_version=new.current_version,
                      last_version_flashed=new.current_version)
    return values


def record(db: db_api.Database, node_id: int,
           components: Sequence[Reading]) -> None:
    """Record one reading of the node's components, in one transaction.

    Two readings of one node at once (two conductors cannot hold its
    lock, but a manual call might race a cleaning) meet the unique
    constraint, and the later one fails with ``DBDuplicateEntry``; the
    caller logs it, and the next reading records it.
    """
    now = base.utcnow()
    with db.writer() as conn:
        known = {row.component: row for row in
                 conn.execute(_OF_NODE, {'b_node': node_id})}
        for new in components:
            old = known.get(new.component)
            if old is None:
                conn.execute(TABLE.insert().values(
                    node_id=node_id, component=new.component,
                    initial_version=new.current_version,
                    current_version=new.current_version,
                    vendor=new.vendor, model=new.model,
                    serial_number=new.serial_number, created_at=now))
                continue
            values = _changes(old, new)
            if values:
                conn.execute(TABLE.update().where(
                    TABLE.c.id == old.id).values(updated_at=now, **values))
