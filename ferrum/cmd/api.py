# SPDX-License-Identifier: Apache-2.0
"""``ferrum-api``: the REST API, served by cheroot (run it under systemd).

With ``[DEFAULT] rpc_transport = local`` (the default) it runs its
conductor in the same process, see :mod:`ferrum.api.local`; with
``json-rpc`` it runs none and calls ``ferrum-conductor`` processes, see
:mod:`ferrum.api.remote`. The all-in-one ``ferrum`` is always local.
Unlike ``ferrum`` it does not upgrade the database schema: run
``ferrum-dbsync upgrade`` first.
"""

import sys

from ferrum import conf as ferrum_conf
from ferrum.api import remote
from ferrum.api import server
from ferrum.cmd import service_runner
from ferrum.cmd import startup
from ferrum.db import migration


def serve(argv: list[str] | None, name: str, upgrade_schema: bool) -> int:
    """Run the API (and a local conductor) until SIGTERM; the exit status.

    A mistake found at start is one line on standard error (see
    :mod:`ferrum.cmd.startup`).

    Start-up order: refuse a forbidden address, upgrade the schema if
    asked, start the local conductor, then serve the API. Stop in
    reverse: no new requests first, then the conductor finishes its work.
    """
    return startup.main(name, lambda: _serve(argv, name, upgrade_schema))


def _serve(argv: list[str] | None, name: str, upgrade_schema: bool) -> int:
    conf = ferrum_conf.load_for_program(
        argv if argv is not None else sys.argv[1:])
    backend = remote.backend(conf, local_only=upgrade_schema)
    servers: list[server.APIServer] = []

    def start() -> None:
        api = server.APIServer(conf)
        if upgrade_schema:
            migration.upgrade(backend.db.engine)
        app = backend.start()
        try:
            api.start(app)
        except BaseException:
            backend.stop()
            raise
        servers.append(api)

    def stop() -> None:
        for api in servers:
            api.stop()
        backend.stop()

    return service_runner.run(conf, start, stop, name)


def main(argv: list[str] | None = None) -> int:
    return serve(argv, 'ferrum-api', upgrade_schema=False)


if __name__ == '__main__':
    sys.exit(main())
