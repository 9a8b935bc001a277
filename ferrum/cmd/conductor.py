# SPDX-License-Identifier: Apache-2.0
"""``ferrum-conductor``: the conductor daemon (run it under systemd).

With ``[DEFAULT] rpc_transport = json-rpc`` it also serves the JSON-RPC
endpoint ``ferrum-api`` calls (see :mod:`ferrum.rpc.server`). The endpoint
is bound and answering (503 until the conductor is ready) before the
conductor registers its address, so the API never finds a registered
address that refuses connections.
"""

import sys

from ferrum import conf as ferrum_conf
from ferrum.api import server
from ferrum.cmd import service_runner
from ferrum.cmd import startup
from ferrum.conductor import service
from ferrum.leases import engine as lease_engine
from ferrum.rpc import server as rpc_server


def _started(conductor: service.ConductorService) -> None:
    conductor.start()


def main(argv: list[str] | None = None) -> int:
    return startup.main('ferrum-conductor', lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    conf = ferrum_conf.load_for_program(
        argv if argv is not None else sys.argv[1:])
    conductor = service.ConductorService(
        conf, extra_periodics=[lease_engine.LeaseEngine()])
    if conf.rpc_transport != 'json-rpc':
        return service_runner.run(conf, lambda: _started(conductor),
                                  conductor.stop, 'ferrum-conductor')
    endpoint = server.APIServer(conf, group='json_rpc',
                                what='conductor JSON-RPC endpoint')

    def start() -> None:
        endpoint.start(rpc_server.application(conf,
                                              lambda: conductor.manager))
        try:
            conductor.start(rpc_address=endpoint.url)
        except BaseException:
            endpoint.stop()
            raise

    def stop() -> None:
        # The conductor first: calls still arriving while it finishes its
        # work are answered ConductorNotServing, which the API retries on
        # the node's next owner, rather than with connection errors.
        conductor.stop()
        endpoint.stop()

    return service_runner.run(conf, start, stop, 'ferrum-conductor')


if __name__ == '__main__':
    sys.exit(main())
