# SPDX-License-Identifier: Apache-2.0
"""Options of the [database] group, from oslo.db, plus ferrum's own (the
SQLite writer's wait, the event feed's bounds on PostgreSQL)."""

from oslo_config import cfg
from oslo_db import options as db_options

GROUP = 'database'

opts: list[cfg.Opt] = [
    cfg.IntOpt('sqlite_busy_timeout', default=30000, min=0,
               help='Milliseconds an SQLite writer waits for the database '
                    'write lock held by another writer before failing. Only '
                    'used with an sqlite:// connection. 0 fails at once.'),
    cfg.IntOpt('event_writer_timeout', default=10, min=1,
               help='PostgreSQL only: seconds a transaction may stay open '
                    'once it has taken the ids of its events (then only '
                    'its commit is left) before the server ends it, '
                    'rolled back. This bounds how long one hung writer can '
                    'hold up the followers of GET /v1/events.'),
    cfg.IntOpt('event_feed_wait', default=100, min=1, max=10000,
               help='PostgreSQL only: milliseconds the event feed waits for '
                    'the transactions holding event ids to commit before it '
                    'answers with the newest event it last knew. New event '
                    'writers queue behind that wait, so keep it short.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # oslo.db registers its own options on the group; ferrum adds its own.
    # The connection default is computed from [DEFAULT]state_path when the
    # database is opened (see db.api).
    db_options.set_defaults(conf)
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """oslo.db's options and ferrum's, for the sample file."""
    return {GROUP: list(db_options.database_opts) + opts}
