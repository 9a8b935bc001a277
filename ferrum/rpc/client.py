# SPDX-License-Identifier: Apache-2.0
"""The ``json-rpc`` transport: the API calls separate conductors over HTTP.

:class:`JsonRpcConductorAPI` implements
:class:`~ferrum.conductor.rpcapi.ConductorAPI`. A call about a node goes to
the conductor the hash ring picks for it (see :mod:`ferrum.common.hash_ring`);
enrolling goes to a conductor of the node's group that runs the driver;
allocations go to a random live conductor. Each conductor's address is the
``rpc_address`` it registered in the conductors table.

The live conductors come from the API's
:class:`~ferrum.rpc.registry.ConductorRegistry`, the same view the node
``conductor`` field is rendered from. A conductor that refuses the
connection, or answers that it is starting or stopping, did nothing: the
view is re-read at once and the call is sent once more, to the conductor
the ring picks without the one that failed (the node's next owner once
that one has left). Any other failure to reach a conductor is a 503
(:class:`ConductorUnreachable`), never a 500, and is not retried: the
conductor may have done the work.

Each API thread keeps one HTTP session (keep-alive connections per
conductor), so a call does not pay for a new TCP connection.

Under ``[json_rpc] auth_strategy = keystone`` every call carries the
API's own token (:class:`~ferrum.rpc.service_auth.ServiceToken`); one
refused with 401 is sent once more with a new token.

HTTPS addresses are verified against ``[json_rpc] cafile`` (see
:mod:`ferrum.common.tls`); with ``[json_rpc] use_ssl`` a plain HTTP address
is never called. A call refused in TLS is a 503 naming the option to fix,
and is not sent to another conductor, which would be no more trusted.
"""

import itertools
import logging
import random
import threading
from collections.abc import Callable, Collection
from typing import Any

import requests
from oslo_config import cfg
from urllib3 import exceptions as urllib3_exc

from ferrum.common import exception
from ferrum.common import hash_ring
from ferrum.common import requester
from ferrum.common import tls
from ferrum.db import api as db_api
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.rpc import registry as registry_mod
from ferrum.rpc import service_auth
from ferrum.rpc import wire

LOG = logging.getLogger(__name__)


class NoConductorForNode(exception.TemporaryFailure):
    msg_fmt = ('No live conductor runs hardware type "%(driver)s" in '
               'conductor group "%(group)s"; start one with that driver in '
               'enabled_hardware_types and [conductor] conductor_group = '
               '"%(group)s", or move the node to a served group.')


class NoConductorInGroup(exception.Invalid):
    msg_fmt = ('No live conductor in conductor group "%(group)s" runs '
               'hardware type "%(driver)s", so no conductor would manage '
               'the node. Use a conductor group that is served, or first '
               'start a conductor with [conductor] conductor_group = '
               '"%(group)s" and that hardware type in '
               'enabled_hardware_types.')


class NoConductor(exception.TemporaryFailure):
    msg_fmt = ('No live conductor with a JSON-RPC address is registered; '
               'start a ferrum-conductor with [DEFAULT] rpc_transport = '
               'json-rpc.')


class ConductorUnreachable(exception.TemporaryFailure):
    msg_fmt = ('Conductor %(host)s at %(address)s did not answer the '
               '%(method)s call: %(reason)s')


class CallTooLarge(exception.FerrumException):
    msg_fmt = ('Conductor %(host)s refused the %(method)s call unread: '
               '%(reason)s')
    code = 413


def _too_large_reason(answer: requests.Response) -> str:
    """The conductor's words for a 413, which carries a JSON-RPC error."""
    try:
        return str(answer.json()['error']['message'])
    except (ValueError, KeyError, TypeError):
        return 'the call is larger than the conductor accepts.'


#: Picks a conductor from a view, leaving out some hosts; None if none fits.
Chooser = Callable[[registry_mod.View, Collection[str]], str | None]


class _NotServed(Exception):
    """The conductor did nothing: the call may go to another one."""

    def __init__(self, error: exception.TemporaryFailure) -> None:
        super().__init__(str(error))
        self.error = error


def _without(conductors: hash_ring.Conductors, hosts: Collection[str]
             ) -> hash_ring.Conductors:
    return {host: value for host, value in conductors.items()
            if host not in hosts}


def _refused(exc: requests.ConnectionError) -> bool:
    """Whether no connection was made, so the call was never sent."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    reason = getattr(exc.args[0] if exc.args else None, 'reason', None)
    return isinstance(reason, (urllib3_exc.NewConnectionError,
                               urllib3_exc.ConnectTimeoutError))


class JsonRpcConductorAPI:
    """Routes each :class:`ConductorAPI` call to one conductor over HTTP."""

    def __init__(self, conf: cfg.ConfigOpts, db: db_api.Database,
                 conductors: registry_mod.ConductorRegistry | None = None
                 ) -> None:
        """
        :param conductors: the API's view of the conductors (by default a
            view of this client's own).
        """
        self._conf = conf
        self._db = db
        self._registry = conductors or registry_mod.ConductorRegistry(
            db, conf, require_address=True)
        self._ids = itertools.count(1)
        self._local = threading.local()
        options = conf.json_rpc
        self._auth: tuple[str, str] | None = None
        if (options.auth_strategy == 'http_basic'
                and options.http_basic_username):
            self._auth = (options.http_basic_username,
                          options.http_basic_password or '')
        self._https_only: bool = options.use_ssl
        self._verify, self._cert = tls.client_settings(conf)
        self._token: service_auth.ServiceToken | None = None
        if options.auth_strategy == 'keystone':
            self._token = service_auth.ServiceToken(conf, self._verify,
                                                    self._cert)

    # ---- routing ------------------------------------------------------------

    def _pick(self, choose: Chooser, missing: exception.FerrumException
              ) -> tuple[str, str]:
        """(host, address) chosen from the current view, else a fresh one."""
        view = self._registry.view()
        host = choose(view, ())
        if host is None:
            view = self._registry.refresh()
            host = choose(view, ())
        if host is None:
            raise missing
        return host, view.addresses[host]

    @staticmethod
    def _for_node(driver: str, group: str, node_uuid: str) -> Chooser:
        return lambda view, exclude: hash_ring.conductor_for(
            _without(view.conductors, exclude), driver, group, node_uuid)

    @staticmethod
    def _random(hosts: Collection[str]) -> str | None:
        return random.choice(sorted(hosts)) if hosts else None

    def _node_call(self, node_id: int | str, method: str,
                   changes: dict[str, Any] | None = None, /,
                   **params: Any) -> Any:
        """Call ``method`` on the conductor that handles the node."""
        node = node_obj.Node.get(self._db, node_id)
        changes = changes or {}
        # A driver or group change goes to a conductor of the new one, which
        # checks the node's interfaces against the drivers it loaded.
        driver = changes.get('driver', node.driver)
        group = changes.get('conductor_group', node.conductor_group)
        if (driver, group) != (node.driver, node.conductor_group):
            missing: exception.FerrumException = NoConductorInGroup(
                driver=driver, group=group)
        else:
            missing = NoConductorForNode(driver=driver, group=group)
        return self._call(self._for_node(driver, group, node.uuid), missing,
                          method, **params)

    # ---- the call -----------------------------------------------------------

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, 'session',
                                                   None)
        if session is None:
            session = requests.Session()
            session.auth = self._auth
            session.headers['Content-Type'] = 'application/json'
            self._local.session = session
        return session

    def _call(self, choose: Chooser, missing: exception.FerrumException,
              method: str, /, **params: Any) -> Any:
        host, address = self._pick(choose, missing)
        try:
            return self._send(host, address, method, params)
        except _NotServed as not_served:
            first_error = not_served.error
        # Out of the ring now, or soon: its nodes' next owner can serve.
        view = self._registry.refresh()
        other = choose(view, (host,))
        if other is None:
            raise first_error
        LOG.info('JSON-RPC call %s: conductor %s is not serving, calling %s '
                 'instead', method, host, other)
        try:
            return self._send(other, view.addresses[other], method, params)
        except _NotServed as again:
            raise again.error from None

    def _send(self, host: str, address: str, method: str,
              params: dict[str, Any]) -> Any:
        """One call to one conductor.

        :raises _NotServed: the conductor did nothing with the call.
        :raises ConductorUnreachable: it may have done something.
        """
        call: dict[str, Any] = {'jsonrpc': '2.0', 'method': method,
                                'params': params, 'id': next(self._ids)}
        asked = requester.current()
        if asked != requester.Requester():
            # Beside params, as Ironic's JSON-RPC carries its context: who
            # asked, for the events the call records.
            call['context'] = {'user_id': asked.user_id,
                               'project_id': asked.project_id}
        body = wire.dumps(call)

        def unreachable(reason: str) -> ConductorUnreachable:
            LOG.warning('JSON-RPC call %s to conductor %s at %s failed: %s',
                        method, host, address, reason)
            return ConductorUnreachable(host=host, address=address,
                                        method=method, reason=reason)
        if self._https_only and not address.startswith('https://'):
            # Credentials and driver_info would cross in clear text.
            raise unreachable('it registered a plain HTTP address, and '
                              '[json_rpc] use_ssl here allows HTTPS only: '
                              'set [json_rpc] use_ssl = true on that '
                              'conductor too')
        try:
            answer = self._post(address, body)
            if answer.status_code == 401 and self._token is not None:
                # Expired or revoked before keystoneauth expected: the
                # conductor did nothing, so once more with a new token.
                self._token.invalidate()
                answer = self._post(address, body)
            if answer.status_code == 413:
                raise CallTooLarge(host=host, method=method,
                                   reason=_too_large_reason(answer))
            answer.raise_for_status()
            response = answer.json()
        except requests.ConnectionError as exc:
            # Before _refused: a handshake that failed also sent nothing,
            # but another conductor is no more trusted than this one.
            failure = tls.client_failure(exc)
            if failure is not None:
                raise unreachable(failure) from exc
            if _refused(exc):
                raise _NotServed(unreachable(str(exc))) from exc
            raise unreachable(str(exc)) from exc
        except (requests.RequestException, ValueError) as exc:
            # Timed out, an HTTP error (401 ...), or not JSON.
            raise unreachable(str(exc)) from exc
        if not isinstance(response, dict):
            raise unreachable('the answer is not an object')
        if 'error' in response:
            error = wire.decode_error(response['error'] or {})
            if isinstance(error, exception.ConductorNotServing):
                raise _NotServed(error)
            raise error
        return wire.decode_result(self._db, response.get('result'))

    def _post(self, address: str, body: bytes) -> requests.Response:
        headers = self._token.headers() if self._token else None
        # verify per call: requests lets REQUESTS_CA_BUNDLE override a
        # session's own.
        return self._session().post(
            address, data=body, headers=headers, verify=self._verify,
            cert=self._cert, timeout=(self._conf.json_rpc.connect_timeout,
                                      self._conf.json_rpc.timeout))

    # ---- ConductorAPI -------------------------------------------------------

    def create_node(self, values: dict[str, Any]) -> node_obj.Node:
        driver = values.get('driver')
        if not driver:
            raise exception.MissingParameterValue(
                reason='A node needs a "driver" (hardware type).')
        group = values.get('conductor_group') or ''
        view = self._registry.view(driver)
        if not any(driver in types for _g, types in view.conductors.values()):
            raise exception.DriverNotSupported(driver=driver)
        # Enrolled by a conductor of its group: the one place that checks
        # its interfaces against drivers that will really manage it.
        node: node_obj.Node = self._call(
            lambda view, exclude: self._random(hash_ring.hosts_for(
                _without(view.conductors, exclude), driver, group)),
            NoConductorInGroup(driver=driver, group=group), 'create_node',
            values=values)
        return node

    def update_node(self, node_id: int, changes: dict[str, Any],
                    reset_interfaces: bool = False) -> node_obj.Node:
        node: node_obj.Node = self._node_call(
            node_id, 'update_node', changes, node_id=node_id,
            changes=changes, reset_interfaces=reset_interfaces)
        return node

    def destroy_node(self, node_id: int) -> None:
        self._node_call(node_id, 'destroy_node', node_id=node_id)

    def do_provisioning_action(self, node_id: int, action: str,
                               args: dict[str, Any] | None = None) -> None:
        self._node_call(node_id, 'do_provisioning_action', node_id=node_id,
                        action=action, args=args)

    def change_node_power_state(self, node_id: int, target: str,
                                timeout: int | None = None) -> None:
        self._node_call(node_id, 'change_node_power_state', node_id=node_id,
                        target=target, timeout=timeout)

    def set_maintenance(self, node_id: int, enabled: bool,
                        reason: str | None = None) -> None:
        self._node_call(node_id, 'set_maintenance', node_id=node_id,
                        enabled=enabled, reason=reason)

    def validate_driver_interfaces(self, node_id: int
                                   ) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = self._node_call(
            node_id, 'validate_driver_interfaces', node_id=node_id)
        return result

    def set_boot_device(self, node_id: int, device: str,
                        persistent: bool = False) -> None:
        self._node_call(node_id, 'set_boot_device', node_id=node_id,
                        device=device, persistent=persistent)

    def inject_nmi(self, node_id: int) -> None:
        self._node_call(node_id, 'inject_nmi', node_id=node_id)

    def get_boot_device(self, node_id: int) -> dict[str, Any]:
        result: dict[str, Any] = self._node_call(
            node_id, 'get_boot_device', node_id=node_id)
        return result

    def get_supported_boot_devices(self, node_id: int) -> list[str]:
        result: list[str] = self._node_call(
            node_id, 'get_supported_boot_devices', node_id=node_id)
        return result

    def attach_virtual_media(self, node_id: int, device_type: str,
                             image_url: str) -> None:
        self._node_call(node_id, 'attach_virtual_media', node_id=node_id,
                        device_type=device_type, image_url=image_url)

    def detach_virtual_media(self, node_id: int,
                             device_types: list[str] | None = None) -> None:
        self._node_call(node_id, 'detach_virtual_media', node_id=node_id,
                        device_types=device_types)

    def get_virtual_media(self, node_id: int) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._node_call(
            node_id, 'get_virtual_media', node_id=node_id)
        return result

    def vif_list(self, node_id: int) -> list[dict[str, Any]]:
        result: list[dict[str, Any]] = self._node_call(
            node_id, 'vif_list', node_id=node_id)
        return result

    def vif_attach(self, node_id: int, vif_info: dict[str, Any]) -> None:
        self._node_call(node_id, 'vif_attach', node_id=node_id,
                        vif_info=vif_info)

    def vif_detach(self, node_id: int, vif_id: str) -> None:
        self._node_call(node_id, 'vif_detach', node_id=node_id,
                        vif_id=vif_id)

    def heartbeat(self, node_id: int, callback_url: str,
                  agent_version: str | None = None,
                  agent_token: str | None = None,
                  agent_verify_ca: str | None = None) -> None:
        self._node_call(node_id, 'heartbeat', node_id=node_id,
                        callback_url=callback_url,
                        agent_version=agent_version,
                        agent_token=agent_token,
                        agent_verify_ca=agent_verify_ca)

    def vendor_passthru(self, node_id: int, method: str, http_method: str,
                        info: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = self._node_call(
            node_id, 'vendor_passthru', node_id=node_id, method=method,
            http_method=http_method, info=info)
        return result

    def get_vendor_passthru_methods(self, node_id: int
                                    ) -> dict[str, dict[str, Any]]:
        result: dict[str, dict[str, Any]] = self._node_call(
            node_id, 'get_vendor_passthru_methods', node_id=node_id)
        return result

    def _any_call(self, method: str, **params: Any) -> Any:
        """Call ``method`` on a random live conductor."""
        return self._call(
            lambda view, exclude: self._random(
                set(view.conductors) - set(exclude)),
            NoConductor(), method, **params)

    def create_allocation(self, values: dict[str, Any], traits: list[str]
                          ) -> allocation_obj.Allocation:
        allocation: allocation_obj.Allocation = self._any_call(
            'create_allocation', values=values, traits=traits)
        return allocation

    def backfill_allocation(self, node_id: int, values: dict[str, Any],
                            traits: list[str]) -> allocation_obj.Allocation:
        allocation: allocation_obj.Allocation = self._any_call(
            'backfill_allocation', node_id=node_id, values=values,
            traits=traits)
        return allocation

    def destroy_allocation(self, ident: int | str) -> None:
        self._any_call('destroy_allocation', ident=ident)
