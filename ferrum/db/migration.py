# SPDX-License-Identifier: Apache-2.0
"""Schema upgrades through Alembic: upgrade(), version(), stamp()."""

import os

import alembic.command
import alembic.config
import alembic.migration
import sqlalchemy as sa

from ferrum.common import exception

_HERE = os.path.dirname(__file__)


def _config(engine: sa.Engine) -> alembic.config.Config:
    config = alembic.config.Config(os.path.join(_HERE, 'alembic.ini'))
    config.set_main_option('script_location', os.path.join(_HERE, 'alembic'))
    config.attributes['engine'] = engine
    return config


def upgrade(engine: sa.Engine, revision: str = 'head') -> None:
    """Bring the schema up to ``revision`` (idempotent)."""
    alembic.command.upgrade(_config(engine), revision)


def version(engine: sa.Engine) -> str | None:
    """The revision the database is at, or None when it has no schema."""
    with engine.connect() as conn:
        context = alembic.migration.MigrationContext.configure(conn)
        return context.get_current_revision()


def require_current(engine: sa.Engine) -> None:
    """:raises SchemaOutOfDate: the schema is not this code's newest."""
    current = version(engine)
    if current != head():
        raise exception.SchemaOutOfDate(
            url=engine.url.render_as_string(hide_password=True),
            current=current, head=head())


def head() -> str:
    """The newest revision this code knows."""
    from alembic import script
    scripts = script.ScriptDirectory.from_config(
        _config(sa.create_engine('sqlite://')))
    return str(scripts.get_current_head())
