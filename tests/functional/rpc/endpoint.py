# SPDX-License-Identifier: Apache-2.0
"""A conductor serving JSON-RPC in the test's own process, on loopback."""

import contextlib

from ferrum.api import server
from ferrum.conductor import service
from ferrum.rpc import server as rpc_server


@contextlib.contextmanager
def serving(conf, db, user_file=None):
    """A started conductor and its JSON-RPC endpoint (a free port), which
    retries a locked node once at once; ``user_file`` is the endpoint's
    htpasswd file for HTTP Basic."""
    conf.set_override('port', 0, group='json_rpc')
    conf.set_override('node_locked_retry_attempts', 1, group='conductor')
    conf.set_override('node_locked_retry_interval', 0, group='conductor')
    svc = service.ConductorService(conf, db=db)
    endpoint = server.APIServer(conf, group='json_rpc', what='JSON-RPC')
    endpoint.start(rpc_server.Application(
        lambda: svc.manager, conf.host, user_file,
        max_body=rpc_server.max_call_size(conf)))
    svc.start(start_periodics=False, rpc_address=endpoint.url)
    try:
        yield svc, endpoint
    finally:
        svc.stop()
        endpoint.stop()
