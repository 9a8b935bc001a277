# SPDX-License-Identifier: Apache-2.0
"""The API on the ``json-rpc`` transport: conductors run in other processes.

With ``[DEFAULT] rpc_transport = json-rpc``, ``ferrum-api`` and
``ferrum.api.wsgi:application`` start no conductor and load no driver:
every conductor call goes over HTTP to a ``ferrum-conductor`` (see
:mod:`ferrum.rpc.client`). :func:`backend` picks the transport.
"""

import flask
from oslo_config import cfg

from ferrum.api import app as api_app
from ferrum.api import local
from ferrum.db import api as db_api
from ferrum.rpc import client
from ferrum.rpc import registry


class RemoteAPI:
    """The API app built on the JSON-RPC client; nothing else runs here."""

    def __init__(self, conf: cfg.ConfigOpts,
                 db: db_api.Database | None = None) -> None:
        self.conf = conf
        self.db = db or db_api.Database(conf)

    def start(self) -> flask.Flask:
        """Build the API app.

        :returns: the WSGI application.
        :raises FerrumException: the app cannot be built (an unusable
            htpasswd file).
        """
        conductors = registry.ConductorRegistry(self.db, self.conf,
                                                require_address=True)
        return api_app.create_app(
            self.conf, self.db,
            client.JsonRpcConductorAPI(self.conf, self.db, conductors),
            conductors)

    def stop(self) -> None:
        """Nothing runs in the background; kept for symmetry with LocalAPI."""


def backend(conf: cfg.ConfigOpts, local_only: bool = False
            ) -> local.LocalAPI | RemoteAPI:
    """The backend ``[DEFAULT] rpc_transport`` asks for.

    :param local_only: always the local transport (the all-in-one
        ``ferrum``, whose point is running everything in one process).
    """
    if conf.rpc_transport == 'json-rpc' and not local_only:
        return RemoteAPI(conf)
    return local.LocalAPI(conf)
