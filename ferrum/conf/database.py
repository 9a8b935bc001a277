# SPDX-License-Identifier: Apache-2.0
"""Options of the [database] group, from oslo.db, plus ferrum's SQLite ones."""

from oslo_config import cfg
from oslo_db import options as db_options

GROUP = 'database'

opts: list[cfg.Opt] = [
    cfg.IntOpt('sqlite_busy_timeout', default=30000, min=0,
               help='Milliseconds an SQLite writer waits for the database '
                    'write lock held by another writer before failing. Only '
                    'used with an sqlite:// connection. 0 fails at once.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # oslo.db registers its own options on the group; ferrum only adds the
    # SQLite busy timeout. The connection default is computed from
    # [DEFAULT]state_path when the database is opened (see db.api).
    db_options.set_defaults(conf)
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """oslo.db's options and ferrum's, for the sample file."""
    return {GROUP: list(db_options.database_opts) + opts}
