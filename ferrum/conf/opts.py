# SPDX-License-Identifier: Apache-2.0
"""The ``oslo.config.opts`` entry point used by oslo-config-generator."""

from oslo_config import cfg

from ferrum.conf import agent
from ferrum.conf import allocation
from ferrum.conf import api
from ferrum.conf import conductor
from ferrum.conf import database
from ferrum.conf import default
from ferrum.conf import deploy
from ferrum.conf import ipmi
from ferrum.conf import json_rpc
from ferrum.conf import lease
from ferrum.conf import metrics
from ferrum.conf import oneview
from ferrum.conf import placement
from ferrum.conf import redfish
from ferrum.conf import ssl


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    return [
        ('DEFAULT', (default.opts + api.auth_opts
                     + json_rpc.transport_opts)),
        (agent.GROUP, agent.opts),
        (allocation.GROUP, allocation.opts),
        (api.GROUP, api.opts),
        (conductor.GROUP, conductor.opts),
        (database.GROUP, database.list_opts()),
        (deploy.GROUP, deploy.opts),
        (ipmi.GROUP, ipmi.opts),
        (json_rpc.GROUP, json_rpc.list_opts()),
        (lease.GROUP, lease.opts),
        (metrics.GROUP, metrics.opts),
        (oneview.GROUP, oneview.opts),
        (placement.GROUP, placement.list_opts()),
        (redfish.GROUP, redfish.opts),
        (ssl.GROUP, ssl.opts),
    ]
