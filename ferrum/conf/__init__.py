# SPDX-License-Identifier: Apache-2.0
"""ferrum's configuration: one module per option group, registered on demand.

Nothing here creates a global ``CONF``. Services receive the ``ConfigOpts``
they run with, so each test builds a fresh one with :func:`new_conf`.
"""

from oslo_config import cfg
from oslo_log import log

from ferrum.common import memory
from ferrum.conf import allocation
from ferrum.conf import api
from ferrum.conf import conductor
from ferrum.conf import database
from ferrum.conf import default
from ferrum.conf import ipmi
from ferrum.conf import json_rpc
from ferrum.conf import lease
from ferrum.conf import oneview
from ferrum.conf import placement
from ferrum.conf import ssl
from ferrum.conf import tenancy


def register_opts(conf: cfg.ConfigOpts) -> None:
    """Register every ferrum option group (and oslo.log's) on ``conf``."""
    default.register_opts(conf)
    allocation.register_opts(conf)
    api.register_opts(conf)
    conductor.register_opts(conf)
    database.register_opts(conf)
    ipmi.register_opts(conf)
    json_rpc.register_opts(conf)
    lease.register_opts(conf)
    oneview.register_opts(conf)
    placement.register_opts(conf)
    ssl.register_opts(conf)
    tenancy.register_opts(conf)
    log.register_options(conf)


def new_conf(args: list[str] | None = None,
             default_config_files: list[str] | None = None) -> cfg.ConfigOpts:
    """Build and parse a fresh ``ConfigOpts`` with every ferrum option."""
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf(args or [], project='ferrum',
         default_config_files=default_config_files or [])
    return conf


def load_for_program(args: list[str] | None,
                     default_config_files: list[str] | None = None
                     ) -> cfg.ConfigOpts:
    """Set up a ferrum program: memory policy, configuration, logging.

    For the console scripts and the WSGI entry point; tests use
    :func:`new_conf`, which leaves logging alone.
    """
    memory.return_large_buffers()
    conf = new_conf(args, default_config_files)
    log.setup(conf, 'ferrum')
    return conf
