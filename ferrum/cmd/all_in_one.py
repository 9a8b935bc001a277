# SPDX-License-Identifier: Apache-2.0
"""``ferrum``: conductor (and, once it lands, the API) in one process.

With no config file it runs on an embedded SQLite database under
``./.ferrum/`` with ``fake-hardware`` enabled, and upgrades that database's
schema itself, so ``make run`` works on a fresh machine.
"""

import sys

from ferrum.cmd import service_runner
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration


def main(argv: list[str] | None = None) -> int:
    conf = service_runner.load_conf(argv)
    db = db_api.Database(conf)

    def start() -> None:
        migration.upgrade(db.engine)
        conductor.start()

    conductor = service.ConductorService(conf, db=db)
    return service_runner.run(conf, start, conductor.stop, 'ferrum')


if __name__ == '__main__':
    sys.exit(main())
