# SPDX-License-Identifier: Apache-2.0
"""The ``json-rpc`` transport: the API calls separate conductors over HTTP.

:class:`JsonRpcConductorAPI` implements
:class:`~ferrum.conductor.rpcapi.ConductorAPI`. A call about a node goes to
the conductor the hash ring picks for it (see :mod:`ferrum.rpc.ring`);
enrolling goes to a conductor that runs the driver; allocations go to a
random live conductor. Each conductor's address is the ``rpc_address`` it
registered in the conductors table.

The view of the live conductors is read from the database at most once per
``[DEFAULT] hash_ring_reset_interval`` seconds, and again at once when no
known conductor qualifies or one cannot be reached. Every failure to reach
a conductor is a 503 (:class:`ConductorUnreachable`), never a 500.
"""

import base64
import dataclasses
import itertools
import json
import logging
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from oslo_config import cfg

from ferrum.common import exception
from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from ferrum.rpc import ring
from ferrum.rpc import wire

LOG = logging.getLogger(__name__)


class NoConductorForNode(exception.TemporaryFailure):
    msg_fmt = ('No live conductor runs hardware type "%(driver)s" in '
               'conductor group "%(group)s"; start one with that driver in '
               'enabled_hardware_types and [conductor] conductor_group = '
               '"%(group)s", or move the node to a served group.')


class NoConductor(exception.TemporaryFailure):
    msg_fmt = ('No live conductor with a JSON-RPC address is registered; '
               'start a ferrum-conductor with rpc_transport = json-rpc.')


class ConductorUnreachable(exception.TemporaryFailure):
    msg_fmt = ('Conductor %(host)s at %(address)s did not answer the '
               '%(method)s call: %(reason)s')


@dataclasses.dataclass(frozen=True)
class _View:
    """The live conductors as read at ``read_at``."""

    read_at: float
    conductors: ring.Conductors
    addresses: dict[str, str]


class JsonRpcConductorAPI:
    """Routes each :class:`ConductorAPI` call to one conductor over HTTP."""

    def __init__(self, conf: cfg.ConfigOpts, db: db_api.Database,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._conf = conf
        self._db = db
        self._clock = clock
        self._lock = threading.Lock()
        self._view: _View | None = None
        self._ids = itertools.count(1)
        self._headers = {'Content-Type': 'application/json'}
        options = conf.json_rpc
        if (options.auth_strategy == 'http_basic'
                and options.http_basic_username):
            token = base64.b64encode(('%s:%s' % (
                options.http_basic_username,
                options.http_basic_password or '')).encode()).decode()
            self._headers['Authorization'] = 'Basic %s' % token

    # ---- routing -------------------------------------------------------------

    def _read(self) -> _View:
        timeout = self._conf.conductor.heartbeat_timeout
        conductors = conductor_obj.alive_drivers(self._db, timeout)
        addresses = {c.hostname: c.rpc_address
                     for c in conductor_obj.list_all(self._db)
                     if c.rpc_address and c.hostname in conductors}
        view = _View(self._clock(), {host: value for host, value
                                     in conductors.items()
                                     if host in addresses}, addresses)
        with self._lock:
            self._view = view
        return view

    def _current(self) -> _View:
        with self._lock:
            view = self._view
        if view is None or (self._clock() - view.read_at
                            >= self._conf.hash_ring_reset_interval):
            return self._read()
        return view

    def _invalidate(self) -> None:
        with self._lock:
            self._view = None

    def _pick(self, choose: Callable[[_View], str | None]) -> tuple[str, str]:
        """(host, address) chosen from the cached view, else a fresh one."""
        view = self._current()
        host = choose(view)
        if host is None:
            view = self._read()
            host = choose(view)
        if host is None:
            raise LookupError
        return host, view.addresses[host]

    def _for_node(self, driver: str, group: str, node_uuid: str
                  ) -> tuple[str, str]:
        try:
            return self._pick(lambda view: ring.conductor_for(
                view.conductors, driver, group, node_uuid))
        except LookupError:
            raise NoConductorForNode(driver=driver, group=group) from None

    def _for_driver(self, driver: str) -> tuple[str, str]:
        def choose(view: _View) -> str | None:
            hosts = sorted(host for host, (_group, types)
                           in view.conductors.items() if driver in types)
            return random.choice(hosts) if hosts else None
        try:
            return self._pick(choose)
        except LookupError:
            raise exception.DriverNotSupported(driver=driver) from None

    def _any(self) -> tuple[str, str]:
        try:
            return self._pick(lambda view: random.choice(
                sorted(view.addresses)) if view.addresses else None)
        except LookupError:
            raise NoConductor() from None

    def _node_target(self, node_id: int | str,
                     changes: dict[str, Any] | None = None
                     ) -> tuple[str, str]:
        node = node_obj.Node.get(self._db, node_id)
        changes = changes or {}
        # A driver or group change goes to a conductor of the new one, which
        # checks the node's interfaces against the drivers it loaded.
        return self._for_node(changes.get('driver', node.driver),
                              changes.get('conductor_group',
                                          node.conductor_group), node.uuid)

    # ---- the call ------------------------------------------------------------

    def _call(self, where: tuple[str, str], method: str, /,
              **params: Any) -> Any:
        host, address = where
        request = urllib.request.Request(
            address, method='POST',
            data=wire.dumps({'jsonrpc': '2.0', 'method': method,
                             'params': params, 'id': next(self._ids)}),
            headers=self._headers)
        try:
            with urllib.request.urlopen(
                    request, timeout=self._conf.json_rpc.timeout) as answer:
                response = json.loads(answer.read())
        except (OSError, ValueError) as exc:
            # OSError covers refused, reset, timed out and HTTP errors.
            self._invalidate()
            LOG.warning('JSON-RPC call %s to conductor %s at %s failed: %s',
                        method, host, address, exc)
            raise ConductorUnreachable(host=host, address=address,
                                       method=method, reason=str(exc))
        if not isinstance(response, dict):
            raise ConductorUnreachable(host=host, address=address,
                                       method=method,
                                       reason='the answer is not an object')
        if 'error' in response:
            raise wire.decode_error(response['error'] or {})
        return wire.decode_result(self._db, response.get('result'))

    # ---- ConductorAPI --------------------------------------------------------

    def create_node(self, values: dict[str, Any]) -> node_obj.Node:
        driver = values.get('driver')
        if not driver:
            raise exception.MissingParameterValue(
                reason='A node needs a "driver" (hardware type).')
        node: node_obj.Node = self._call(self._for_driver(driver),
                                         'create_node', values=values)
        return node

    def update_node(self, node_id: int, changes: dict[str, Any],
                    reset_interfaces: bool = False) -> node_obj.Node:
        node: node_obj.Node = self._call(
            self._node_target(node_id, changes), 'update_node',
            node_id=node_id, changes=changes,
            reset_interfaces=reset_interfaces)
        return node

    def destroy_node(self, node_id: int) -> None:
        self._call(self._node_target(node_id), 'destroy_node',
                   node_id=node_id)

    def do_provisioning_action(self, node_id: int, action: str,
                               args: dict[str, Any] | None = None) -> None:
        self._call(self._node_target(node_id), 'do_provisioning_action',
                   node_id=node_id, action=action, args=args)

    def change_node_power_state(self, node_id: int, target: str,
                                timeout: int | None = None) -> None:
        self._call(self._node_target(node_id), 'change_node_power_state',
                   node_id=node_id, target=target, timeout=timeout)

    def set_maintenance(self, node_id: int, enabled: bool,
                        reason: str | None = None) -> None:
        self._call(self._node_target(node_id), 'set_maintenance',
                   node_id=node_id, enabled=enabled, reason=reason)

    def validate_driver_interfaces(self, node_id: int
                                   ) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = self._call(
            self._node_target(node_id), 'validate_driver_interfaces',
            node_id=node_id)
        return result

    def set_boot_device(self, node_id: int, device: str,
                        persistent: bool = False) -> None:
        self._call(self._node_target(node_id), 'set_boot_device',
                   node_id=node_id, device=device, persistent=persistent)

    def get_boot_device(self, node_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._call(
            self._node_target(node_id), 'get_boot_device', node_id=node_id)
        return result

    def get_supported_boot_devices(self, node_id: int) -> list[str]:
        result: list[str] = self._call(
            self._node_target(node_id), 'get_supported_boot_devices',
            node_id=node_id)
        return result

    def create_allocation(self, values: dict[str, Any], traits: list[str]
                          ) -> allocation_obj.Allocation:
        allocation: allocation_obj.Allocation = self._call(
            self._any(), 'create_allocation', values=values, traits=traits)
        return allocation

    def backfill_allocation(self, node_id: int, values: dict[str, Any],
                            traits: list[str]) -> allocation_obj.Allocation:
        allocation: allocation_obj.Allocation = self._call(
            self._any(), 'backfill_allocation', node_id=node_id,
            values=values, traits=traits)
        return allocation

    def destroy_allocation(self, ident: int | str) -> None:
        self._call(self._any(), 'destroy_allocation', ident=ident)
