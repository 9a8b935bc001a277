# SPDX-License-Identifier: Apache-2.0
"""keystonemiddleware's ``auth_token`` in front of ferrum's endpoints: the
API's non-public routes and the conductors' JSON-RPC, each configured in
``[keystone_authtoken]``.

``auth_token`` decides alone, whatever ``[keystone_authtoken]
delay_auth_decision`` says. That option lets a request with a missing,
invalid or expired token through, marked ``X-Identity-Status: Invalid``,
for the application to decide; it exists for services that serve some
callers without a token on the same routes. ferrum has no such route (its
public ones never reach ``auth_token``), so a deferred request could only
meet the policy without roles: 403 where the caller should have had 401,
and 404 that tells an unauthenticated caller which resources exist. And
``auth_token`` then reports Keystone unreachable as an invalid token, so
the 503 a client may retry would be lost too. Deciding in the middleware
keeps its answers: 401 with ``WWW-Authenticate: Keystone uri=...`` before
any policy or lookup, 503 while Keystone cannot be reached.
"""

import logging
from collections.abc import Callable, Iterable
from typing import Any

from keystonemiddleware import auth_token
from oslo_config import cfg

LOG = logging.getLogger(__name__)
#: keystonemiddleware's option group (ferrum.conf.tenancy registers it).
GROUP = 'keystone_authtoken'

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def protect(app: WSGIApp, conf: cfg.ConfigOpts, endpoint: str) -> WSGIApp:
    """``app`` behind ``auth_token``, which refuses every request without
    a valid token itself.

    :param endpoint: what ``app`` serves, for the log.
    """
    # A paste-style override, the one way to set an option of auth_token
    # for one instance: the operator's file stays as it is.
    protected: WSGIApp = auth_token.AuthProtocol(app, {
        'oslo_config_config': conf, 'delay_auth_decision': False})
    # auth_token registered its options on conf, if they were not yet.
    if conf[GROUP].delay_auth_decision:
        LOG.warning('[keystone_authtoken] delay_auth_decision is ignored by '
                    'the %s: no route serves a caller without a valid '
                    'token, so auth_token answers such requests with 401 '
                    '(503 while Keystone is unreachable) itself.', endpoint)
    return protected
