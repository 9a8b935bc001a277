# SPDX-License-Identifier: Apache-2.0
"""The API on the ``local`` transport: its conductor runs in this process.

The all-in-one ``ferrum`` always works this way, and so do ``ferrum-api``
and ``ferrum.api.wsgi:application`` unless ``[DEFAULT] rpc_transport`` is
``json-rpc`` (see :mod:`ferrum.api.remote`). The local conductor registers
under ``[DEFAULT] host`` like any other, so two such processes on one
database need different host names.
"""

import flask
from oslo_config import cfg

from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.leases import engine as lease_engine


class LocalAPI:
    """A conductor started in this process and the API app built on it."""

    def __init__(self, conf: cfg.ConfigOpts,
                 db: db_api.Database | None = None) -> None:
        self.conf = conf
        self.db = db or db_api.Database(conf)
        self.conductor = service.ConductorService(
            conf, db=self.db, extra_periodics=[lease_engine.LeaseEngine()])

    def start(self) -> flask.Flask:
        """Start the conductor, then build the API app on it.

        The database schema must be current: nothing here upgrades it.

        :returns: the WSGI application.
        :raises FerrumException: the conductor cannot start (outdated
            schema, a driver that does not load) or the app cannot be
            built (an unusable htpasswd file); nothing is left running.
        """
        manager = self.conductor.start()
        try:
            return api_app.create_app(
                self.conf, self.db, manager, service_metrics=True)
        except BaseException:
            self.conductor.stop()
            raise

    def stop(self) -> None:
        """Stop the conductor gracefully. Safe to call twice."""
        self.conductor.stop()
