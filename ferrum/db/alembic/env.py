# SPDX-License-Identifier: Apache-2.0
"""Alembic environment: runs migrations on the engine ferrum hands over."""

from alembic import context

from ferrum.db import models

config = context.config
engine = config.attributes['engine']

with engine.connect() as connection:
    context.configure(connection=connection,
                      target_metadata=models.Base.metadata,
                      render_as_batch=engine.dialect.name == 'sqlite')
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
