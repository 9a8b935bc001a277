# SPDX-License-Identifier: Apache-2.0
"""Event ids from a sequence, under a shared lock: no counter row

On PostgreSQL, ``events.id`` takes ``nextval('events_id_seq')``, starting
after the last id ``event_counter`` handed out, and ``event_counter`` is
dropped: the transactions that record events no longer queue on its row.
The feed stays gap-safe through the shared lock each writer holds from
its ids to its commit (see ``ferrum.objects.event``). On SQLite, which
never used the counter, the table is dropped and nothing else changes.

Every conductor and API server must run this release or a later one once
this has run: an older one would look for the counter, and fail its
writes of events (clearly, with no duplicate id) until it is upgraded.

Revision ID: 0015
Revises: 0014
"""

import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == 'postgresql':
        # The lock keeps ids from being taken while the counter is read,
        # by a writer of the release before (which should be stopped).
        op.execute('LOCK TABLE event_counter IN EXCLUSIVE MODE')
        last = bind.execute(sa.text(
            'SELECT GREATEST((SELECT last_id FROM event_counter WHERE id = 1),'
            ' (SELECT max(id) FROM events), 0)')).scalar_one()
        op.execute('CREATE SEQUENCE events_id_seq AS bigint START WITH %d '
                   'OWNED BY events.id' % (int(last) + 1))
        op.execute("ALTER TABLE events ALTER COLUMN id SET DEFAULT "
                   "nextval('events_id_seq')")
    op.drop_table('event_counter')
