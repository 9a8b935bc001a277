# SPDX-License-Identifier: Apache-2.0
"""What a handler reaches: the database, the configuration, the conductors.

``create_app`` stores them on the application; handlers fetch them here so
that none of them reads configuration or opens a database itself.
"""

import datetime
from collections.abc import Callable
from typing import cast

import flask
from oslo_config import cfg

from ferrum.conductor import rpcapi
from ferrum.db import api as db_api
from ferrum.rpc import registry as registry_mod


def db() -> db_api.Database:
    return cast(db_api.Database, flask.current_app.config['FERRUM_DB'])


def conf() -> cfg.ConfigOpts:
    return cast(cfg.ConfigOpts, flask.current_app.config['FERRUM_CONF'])


def clock() -> datetime.datetime:
    """Now, as naive UTC, from the application's clock (``create_app``'s
    ``clock``: the wall clock, or a test's)."""
    now = cast(Callable[[], datetime.datetime],
               flask.current_app.config['FERRUM_CLOCK'])
    return now()


def rpc() -> rpcapi.ConductorAPI:
    return cast(rpcapi.ConductorAPI, flask.current_app.config['FERRUM_RPC'])


def registry() -> registry_mod.ConductorRegistry:
    return cast(registry_mod.ConductorRegistry,
                flask.current_app.config['FERRUM_REGISTRY'])
