# SPDX-License-Identifier: Apache-2.0
"""The Alembic migrations against real SQLite and PostgreSQL databases.

The models in ``ferrum.db.models`` are what the code queries; the migrations
are what deployed databases actually contain. These tests keep the two
honest on both supported backends: every revision applies in order from an
empty database, re-running the upgrade is harmless (``ferrum-dbsync`` runs
on every deploy), and the schema the migrations produce is the schema the
models describe, as seen by Alembic's autogenerate comparison. The
PostgreSQL runs use a real server (``tests/postgres.py``) because DDL, type
reflection and constraint enforcement are precisely where the backends
differ.
"""

import itertools
import os
import pprint
import uuid
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import script as alembic_script
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from oslo_db import exception as db_exc

from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.db import models


def _scripts() -> alembic_script.ScriptDirectory:
    return alembic_script.ScriptDirectory(
        os.path.join(os.path.dirname(migration.__file__), 'alembic'))


def _revisions_oldest_first() -> list[alembic_script.Script]:
    return list(reversed(list(_scripts().walk_revisions('base', 'heads'))))


def _table_names(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def _schema_diff(engine: sa.Engine) -> list[Any]:
    """Alembic's list of differences between the database and the models."""
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={'compare_type': True})
        return list(compare_metadata(context, models.Base.metadata))


def _insert_node(conn: sa.Connection, node_uuid: str) -> None:
    conn.execute(models.Node.__table__.insert().values(
        uuid=node_uuid, driver='fake-hardware', provision_state='enroll'))


def test_single_linear_history() -> None:
    """One head and no branches: upgrade order must be unambiguous."""
    scripts = _scripts()
    assert len(scripts.get_heads()) == 1, scripts.get_heads()
    revisions = _revisions_oldest_first()
    assert revisions, 'no migrations found'
    assert revisions[0].down_revision is None
    for previous, current in itertools.pairwise(revisions):
        assert current.down_revision == previous.revision, (
            '%s does not follow %s' % (current.revision, previous.revision))
    assert revisions[-1].revision == migration.head()


def test_walk_migrations(empty_db: db_api.Database) -> None:
    """Apply each revision in turn from an empty database up to head.

    One step at a time, so a revision that only works when applied together
    with its successors (or that leaves the version table wrong) fails here
    and names itself.
    """
    engine = empty_db.engine
    assert migration.version(engine) is None
    assert _table_names(engine) == set()

    for revision in _revisions_oldest_first():
        migration.upgrade(engine, revision.revision)
        assert migration.version(engine) == revision.revision, (
            'after upgrading to %s' % revision.revision)

    assert migration.version(engine) == migration.head()
    missing = set(models.Base.metadata.tables) - _table_names(engine)
    assert not missing, 'tables missing after upgrade: %s' % sorted(missing)


def test_upgrade_is_idempotent(empty_db: db_api.Database) -> None:
    """Upgrading an up-to-date database changes neither schema nor data."""
    engine = empty_db.engine
    migration.upgrade(engine)
    node_uuid = str(uuid.uuid4())
    with empty_db.writer() as conn:
        _insert_node(conn, node_uuid)
    tables = _table_names(engine)

    migration.upgrade(engine)
    migration.upgrade(engine, 'head')

    assert migration.version(engine) == migration.head()
    assert _table_names(engine) == tables
    with empty_db.reader() as conn:
        uuids = conn.execute(sa.select(models.Node.__table__.c.uuid)
                             ).scalars().all()
    assert uuids == [node_uuid]


def test_nodes_enrolled_before_0021_get_no_firmware(
        empty_db: db_api.Database) -> None:
    """The firmware interface kind arrives with 0021: existing nodes get
    "no-firmware", the only firmware interface there was."""
    migration.upgrade(empty_db.engine, '0020')
    node_uuid = str(uuid.uuid4())
    with empty_db.writer() as conn:
        _insert_node(conn, node_uuid)
    migration.upgrade(empty_db.engine)
    with empty_db.reader() as conn:
        found = conn.execute(sa.text(
            'SELECT firmware_interface FROM nodes WHERE uuid = :uuid'),
            {'uuid': node_uuid}).scalar()
    assert found == 'no-firmware'


def test_models_match_migrations(empty_db: db_api.Database) -> None:
    """The migrated schema is exactly what the models declare.

    Tables, columns, types, nullability, indexes, unique and foreign key
    constraints all count; a model change without a migration (or the
    reverse) fails with the differences in the message.
    """
    migration.upgrade(empty_db.engine)
    diff = _schema_diff(empty_db.engine)
    assert diff == [], ('schema from migrations differs from models '
                        '(%s):\n%s' % (empty_db.engine.dialect.name,
                                       pprint.pformat(diff)))


def test_unique_constraint_enforced_on_postgresql(
        pg_db: db_api.Database) -> None:
    """PostgreSQL itself refuses a second node with the same uuid.

    The objects layer relies on the constraint, not on a read-then-insert,
    to stop duplicates from concurrent API calls; and on oslo.db to turn the
    driver's error into ``DBDuplicateEntry``.
    """
    node_uuid = str(uuid.uuid4())
    with pg_db.writer() as conn:
        _insert_node(conn, node_uuid)

    with pytest.raises(db_exc.DBDuplicateEntry) as excinfo:
        with pg_db.writer() as conn:
            _insert_node(conn, node_uuid)
    assert excinfo.value.columns == ['uuid']

    # The failed transaction was rolled back and the connection is usable.
    with pg_db.reader() as conn:
        count = conn.execute(
            sa.select(sa.func.count()).select_from(models.Node.__table__)
            .where(models.Node.__table__.c.uuid == node_uuid)).scalar_one()
    assert count == 1
