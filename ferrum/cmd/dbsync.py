# SPDX-License-Identifier: Apache-2.0
"""``ferrum-dbsync``: create or upgrade the database schema."""

import sys

from ferrum import conf as ferrum_conf
from ferrum.cmd import startup
from ferrum.db import api as db_api
from ferrum.db import migration


def _add_commands(subparsers: object) -> None:
    upgrade = subparsers.add_parser(  # type: ignore[attr-defined]
        'upgrade', help='Upgrade the schema to the newest revision.')
    upgrade.add_argument('--revision', default='head')
    subparsers.add_parser(  # type: ignore[attr-defined]
        'version', help='Print the schema revision of the database.')


def main(argv: list[str] | None = None) -> int:
    return startup.main('ferrum-dbsync', lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    conf = ferrum_conf.load_for_tool(
        argv if argv is not None else sys.argv[1:], _add_commands)
    db = db_api.Database(conf)
    try:
        if conf.command.name == 'upgrade':
            migration.upgrade(db.engine, conf.command.revision)
            print('Database upgraded to %s' % migration.version(db.engine))
        else:
            print(migration.version(db.engine) or 'none (empty database)')
    finally:
        db.dispose()
    return 0


if __name__ == '__main__':
    sys.exit(main())
