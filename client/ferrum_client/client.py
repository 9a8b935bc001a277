# SPDX-License-Identifier: Apache-2.0
"""A small client for ferrum's lease API, on a keystoneauth1 adapter.

    from ferrum_client import client
    leases = client.LeaseClient.for_endpoint('http://127.0.0.1:6385')
    lease = leases.create(project='demo', resource_class='gold', count=3,
                          end='2026-12-01T18:00:00Z')
"""

from __future__ import annotations

import builtins
import json
from typing import Any

from keystoneauth1 import adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import noauth
from keystoneauth1 import session as ks_session

#: The API version sent when the caller chose none: the lowest at which a
#: node may be named by its name as well as its UUID (Ironic's 1.5). A
#: request without a version is at 1.1, where a name finds no node.
MICROVERSION = '1.5'


class LeaseError(Exception):
    """The API refused a request; ``status`` is the HTTP code."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


def _fault(exc: ks_exc.HttpError) -> LeaseError:
    """The faultstring of an Ironic-shaped error body, or the HTTP text."""
    message = exc.details or exc.message
    try:
        body = exc.response.json()  # type: ignore[union-attr]
        message = json.loads(body['error_message'])['faultstring']
    except (AttributeError, KeyError, TypeError, ValueError):
        pass
    return LeaseError(exc.http_status, message)


class LeaseClient:
    """``/v1/leases`` through a keystoneauth1 adapter of the baremetal
    service (endpoint from the catalog, or ``endpoint_override``).

    Every request carries an API version (``X-OpenStack-Ironic-API-Version``
    and ``OpenStack-API-Version: baremetal``): ``microversion``, else the
    adapter's ``default_microversion``, else :data:`MICROVERSION`.
    """

    def __init__(self, adapter_: adapter.Adapter,
                 microversion: str | None = None) -> None:
        self._api = adapter_
        self.microversion = (microversion or adapter_.default_microversion
                             or MICROVERSION)

    @classmethod
    def for_endpoint(cls, endpoint: str,
                     session: ks_session.Session | None = None,
                     microversion: str | None = None) -> 'LeaseClient':
        """A client of the ferrum at ``endpoint`` (no authentication
        unless ``session`` brings some)."""
        session = session or ks_session.Session(auth=noauth.NoAuth())
        return cls(adapter.Adapter(session, service_type='baremetal',
                                   endpoint_override=endpoint),
                   microversion)

    def _call(self, method: str, url: str, **kwargs: Any) -> Any:
        try:
            response = self._api.request(url, method,
                                         microversion=self.microversion,
                                         **kwargs)
        except ks_exc.HttpError as exc:
            raise _fault(exc) from None
        return response.json() if response.content else None

    def create(self, **fields: Any) -> dict[str, Any]:
        """Book a lease: all the nodes over the whole window, or an error."""
        body = {key: value for key, value in fields.items()
                if value is not None}
        return dict(self._call('POST', '/v1/leases', json=body))

    def list(self, **filters: Any) -> list[dict[str, Any]]:
        """Leases matching ``filters`` (status, project, node, start, end),
        following ``next`` links unless ``limit`` is given."""
        params = {key: value for key, value in filters.items()
                  if value is not None}
        found: list[dict[str, Any]] = []
        while True:
            page = self._call('GET', '/v1/leases', params=params)
            found += page['leases']
            if 'next' not in page or 'limit' in filters:
                return found
            params['marker'] = page['leases'][-1]['uuid']

    def get(self, lease: str) -> dict[str, Any]:
        return dict(self._call('GET', '/v1/leases/%s' % lease))

    # builtins.list: ``list`` is the method above in this class's scope.
    def update(self, lease: str, patch: builtins.list[dict[str, Any]]
               ) -> dict[str, Any]:
        """Apply a JSON Patch (name, extra, end)."""
        return dict(self._call('PATCH', '/v1/leases/%s' % lease, json=patch))

    def delete(self, lease: str) -> None:
        """Cancel a pending lease, or end an active one now."""
        self._call('DELETE', '/v1/leases/%s' % lease)

    def calendar(self, node: str, **span: Any) -> dict[str, Any]:
        """A node's leases and free gaps (``start``, ``end``)."""
        return dict(self._call('GET', '/v1/nodes/%s/leases' % node,
                               params={k: v for k, v in span.items()
                                       if v is not None}))
