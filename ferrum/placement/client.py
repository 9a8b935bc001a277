# SPDX-License-Identifier: Apache-2.0
"""The transport to Placement, as sushy's connector: a keystoneauth1
adapter built from ``[placement]``, a negotiated microversion sent on
every call, and Placement's answers translated into ferrum exceptions.
No URL of a Placement resource is built here: that is
:mod:`ferrum.placement.resources`, the one layer above.

The microversion is the lowest that has everything ferrum relies on
(:data:`NEEDED`): idempotent custom classes and traits, ``reserved`` equal
to ``total`` (1.26) and consumer generations (1.28). It is checked against
``GET /`` once per connection; an older Placement is refused with both
versions named rather than half-synced at 1.0, where providers come back
without a body and traits do not exist. One call goes above it where
Placement serves it: ``POST /reshaper`` (1.30, :data:`RESHAPER`), many
providers' inventories in one request; elsewhere the same changes go one
provider at a time.

Every call passes ``raise_exc=False`` and looks at the status itself, so
that one place decides what is an outage (unreachable, 5xx, refused
credentials: :class:`PlacementUnavailable`), what is a conflict worth
re-reading for (:class:`PlacementConflict` with Placement's error code)
and what is a refusal to record against the node
(:class:`PlacementRefused`); the classes are in
:mod:`ferrum.placement.errors`.

:attr:`PlacementClient.observers` is the one public seam on the wire:
each is called with the method, URL and body of every request just
before it is sent, and may raise (a :class:`PlacementUnavailable` then
stands for an outage, and nothing is sent). Tests stage races and
outages there, at the HTTP boundary, whatever the code above calls
(doc/testing.md).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from ferrum.conf import placement as placement_conf
from ferrum.placement import errors

#: The microversion ferrum speaks: consumer generations (1.28) and
#: everything before it (traits 1.6, idempotent PUT of classes 1.7,
#: ``required`` on provider lists 1.18, POST returning the body 1.20,
#: reserved == total 1.26).
NEEDED = (1, 28)
VERSION = '%d.%d' % NEEDED
#: The one call above :data:`NEEDED`: ``POST /reshaper`` (1.30) writes the
#: inventories of many providers in one request and one transaction. Used
#: only when Placement serves it and lets ferrum call it; otherwise the
#: same changes go one provider at a time, at :data:`VERSION`.
RESHAPER = (1, 30)
RESHAPER_VERSION = '%d.%d' % RESHAPER

#: Placement's error code for a generation that moved under the caller.
CONCURRENT_UPDATE = 'placement.concurrent_update'
INVENTORY_IN_USE = 'placement.inventory.inuse'
#: Deleting a provider that consumers still hold.
PROVIDER_IN_USE = 'placement.resource_provider.inuse'







def _check_endpoint(conf: cfg.ConfigOpts) -> None:
    """Plugins without a service catalog need the endpoint spelled out:
    keystoneauth would only fail at the first request, as if Placement
    were down."""
    group = conf.placement
    if group.auth_type not in ('admin_token', 'none'):
        return

    def value(name: str) -> Any:
        try:
            return getattr(group, name)
        except cfg.NoSuchOptError:
            return None

    if not (group.endpoint_override or value('endpoint')):
        raise errors.ConfigInvalid(
            reason='auth_type %s has no service catalog: set [placement] '
                   'endpoint_override (or, with admin_token, endpoint) to '
                   'the Placement URL.' % group.auth_type)
    if group.auth_type == 'admin_token' and not value('token'):
        raise errors.ConfigInvalid(
            reason='auth_type admin_token needs [placement] token (with '
                   'noauth2, "admin").')


#: Called with (method, URL, body) before a request is sent.
RequestObserver = Callable[[str, str, Any], None]


def _version_tuple(text: str) -> tuple[int, int]:
    major, _, minor = text.partition('.')
    return int(major), int(minor or 0)


class PlacementClient:
    """Calls to Placement at :data:`VERSION`; safe to share between threads.

    :raises ConfigInvalid: when ``[placement]`` names an unknown auth plugin
        or misses one of its required options.
    """

    def __init__(self, conf: cfg.ConfigOpts,
                 timeout: float | None = None,
                 observers: Iterable[RequestObserver] = ()) -> None:
        """:param timeout: seconds, instead of ``[placement] timeout``
            (the API's calls wait less than the conductors').
        :param observers: the first of :attr:`observers`."""
        group = placement_conf.GROUP
        try:
            auth = ks_loading.load_auth_from_conf_options(conf, group)
            session = ks_loading.load_session_from_conf_options(
                conf, group, auth=auth)
            if timeout is not None:
                session.timeout = timeout
            self._adapter = ks_loading.load_adapter_from_conf_options(
                conf, group, session=session, auth=auth)
        except ks_exc.MissingRequiredOptions as exc:
            names = ', '.join('[placement] %s' % opt.dest
                              for opt in exc.options)
            raise errors.ConfigInvalid(reason='auth_type %s needs %s.' % (
                conf.placement.auth_type, names)) from exc
        except ks_exc.NoMatchingPlugin as exc:
            raise errors.ConfigInvalid(
                reason='[placement] auth_type %s is not a keystoneauth '
                       'plugin (admin_token for a Placement running '
                       'noauth2, password for Keystone).'
                       % conf.placement.auth_type) from exc
        except (ks_exc.ClientException, ValueError) as exc:
            raise errors.ConfigInvalid(reason=str(exc)) from exc
        _check_endpoint(conf)
        self._checked = False
        self._found: tuple[int, int] = NEEDED
        #: Set when Placement refused ``POST /reshaper`` (its policy wants
        #: the ``service`` role): from then on, one provider at a time.
        self.reshaper_refused: str | None = None
        self._lock = threading.Lock()
        #: Requests sent, by method: for benchmarks and the status view.
        self.requests: dict[str, int] = {}
        #: Called in the caller's thread, in order, with the method, URL
        #: (relative, with its query) and JSON body (or None) of each
        #: request just before it is sent, the version check included.
        #: One that raises stops the request: nothing is sent, and the
        #: exception reaches the caller as the request's own would.
        self.observers: list[RequestObserver] = list(observers)
    # ---- the version ----------------------------------------------------

    def check_version(self) -> str:
        """Check once that Placement serves :data:`VERSION`; returns it.

        :raises PlacementTooOld: naming the version found and the needed one.
        :raises PlacementUnavailable: when ``GET /`` fails.
        """
        if self._checked:
            return VERSION
        body = self._call('GET', '/', versioned=False)
        versions = (body or {}).get('versions') or [{}]
        found = max((str(v.get('max_version') or '1.0') for v in versions),
                    key=_version_tuple)
        if _version_tuple(found) < NEEDED:
            raise errors.PlacementTooOld(endpoint=self.endpoint(), found=found,
                                         needed=VERSION)
        self._found = _version_tuple(found)
        self._checked = True
        return VERSION

    def can_reshape(self) -> bool:
        """Whether many providers' inventories may go in one request."""
        self.check_version()
        return self._found >= RESHAPER and self.reshaper_refused is None

    def endpoint(self) -> str:
        try:
            return str(self._adapter.get_endpoint() or '?')
        except ks_exc.ClientException:
            return '?'

    def forget_version(self) -> None:
        """Check the version again on the next call (after an outage, the
        service that answers may have been upgraded or replaced)."""
        self._checked = False

    # ---- calls ----------------------------------------------------------

    def get(self, url: str, not_found_ok: bool = False) -> Any:
        """GET ``url``; None when it is a 404 and ``not_found_ok``."""
        return self._call('GET', url, not_found_ok=not_found_ok)

    def put(self, url: str, body: Any = None) -> Any:
        return self._call('PUT', url, body)

    def post(self, url: str, body: Any, version: str = VERSION,
             forbidden_is_refusal: bool = False) -> Any:
        """POST ``body``; ``version`` above :data:`VERSION` only where
        Placement serves it (:meth:`can_reshape`); with
        ``forbidden_is_refusal`` a 403 is Placement's policy refusing this
        one call (:class:`PlacementRefused`), not an outage."""
        return self._call('POST', url, body, version=version,
                          forbidden_is_refusal=forbidden_is_refusal)

    def delete(self, url: str, not_found_ok: bool = True) -> Any:
        return self._call('DELETE', url, not_found_ok=not_found_ok)

    def _call(self, method: str, url: str, body: Any = None,
              versioned: bool = True, not_found_ok: bool = False,
              version: str = VERSION,
              forbidden_is_refusal: bool = False) -> Any:
        if versioned:
            self.check_version()
        kwargs: dict[str, Any] = {'raise_exc': False}
        if versioned:
            kwargs['microversion'] = version
        if body is not None:
            kwargs['json'] = body
        for observer in list(self.observers):
            observer(method, url, body)
        with self._lock:
            self.requests[method] = self.requests.get(method, 0) + 1
        try:
            response = self._adapter.request(url, method, **kwargs)
        except ks_exc.ClientException as exc:
            # Connection refused or timed out, no endpoint in the catalog,
            # Keystone refusing the credentials: all outages to ferrum.
            raise errors.PlacementUnavailable(
                reason='%s: %s' % (type(exc).__name__, exc)) from exc
        status = response.status_code
        if status == 404 and not_found_ok:
            return None
        if status == 403 and forbidden_is_refusal:
            code, detail = _error_of(response)
            raise errors.PlacementRefused(
                method=method, url=url, status=status, error_code=code,
                detail=detail)
        if status in (401, 403):
            raise errors.PlacementUnavailable(
                reason='%s %s was refused with %d: check [placement] '
                       'auth_type and its credentials' % (method, url, status))
        if status >= 500:
            raise errors.PlacementUnavailable(reason='%s %s answered %d' % (
                method, url, status))
        if status >= 400:
            code, detail = _error_of(response)
            cls = (errors.PlacementConflict if status == 409
                   else errors.PlacementRefused)
            raise cls(method=method, url=url, status=status, error_code=code,
                      detail=detail)
        if status == 204 or not response.content:
            return None
        return response.json()


def _error_of(response: Any) -> tuple[str, str]:
    """Placement's error code and detail (its JSON error body)."""
    try:
        error = (response.json().get('errors') or [{}])[0]
    except ValueError:
        return 'placement.undefined_code', response.text[:200]
    detail = str(error.get('detail') or error.get('title') or '')
    # The detail repeats the status line first; the sentence is the rest.
    detail = detail.split('\n\n', 1)[-1].strip()[:300]
    return str(error.get('code') or 'placement.undefined_code'), detail
