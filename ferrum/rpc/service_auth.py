# SPDX-License-Identifier: Apache-2.0
"""``[json_rpc] auth_strategy = keystone``: only ferrum's services call
conductors.

On a conductor, keystonemiddleware's ``auth_token`` (configured in
``[keystone_authtoken]``, as for the API) validates every call's
``X-Auth-Token``: a missing, invalid or expired token gets its 401, an
unreachable Keystone its 503. :func:`refusal` then accepts only a service:
a token with the ``service`` role in the service project (``[DEFAULT]
rbac_service_project_name``), or ``admin`` in system scope. Ironic's
JSON-RPC accepts any ``admin``, but a project's own administrator has that
role in its project under secure RBAC, and a tenant must never drive the
conductors, which check no policy of their own.

On the API, :class:`ServiceToken` gets the token with the keystoneauth
plugin of ``[json_rpc] auth_type`` and its options, over the same TLS
settings as the calls to conductors (``[json_rpc] cafile``...), and
keystoneauth keeps it until shortly before it expires.
"""

import logging
from typing import Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import tls
from ferrum.conf import json_rpc as json_rpc_conf

LOG = logging.getLogger(__name__)
#: The role of OpenStack's service users (nova, ironic-inspector ...).
SERVICE_ROLE = 'service'


class ServiceAuthMissing(exception.FerrumException):
    msg_fmt = ('[json_rpc] auth_strategy is keystone but the API cannot '
               'authenticate to conductors: %(reason)s. Set [json_rpc] '
               'auth_type (e.g. password) with auth_url, username, password, '
               'user_domain_name and project_name (a user with the service '
               'role) or system_scope = all.')


class KeystoneUnavailable(exception.TemporaryFailure):
    msg_fmt = ('The API could not get a Keystone token for its calls to '
               'conductors ([json_rpc] auth_url %(url)s): %(reason)s')


def refusal(environ: dict[str, Any], service_project: str) -> str | None:
    """Why a call that ``auth_token`` let through is refused, or None.

    The identity headers are the middleware's own: it removes those a
    client sent before it sets them.

    :param service_project: the project of the service users
        (``[DEFAULT] rbac_service_project_name``): a tenant may give its
        own users the ``service`` role in its project.
    """
    roles = {role.strip() for role in
             (environ.get('HTTP_X_ROLES') or '').split(',')}
    if SERVICE_ROLE in roles and environ.get(
            'HTTP_X_PROJECT_NAME') == service_project:
        return None
    if 'admin' in roles and environ.get(
            'HTTP_OPENSTACK_SYSTEM_SCOPE') == 'all':
        return None
    return ('Only ferrum\'s services call conductors: the token needs the '
            '"%s" role in project "%s" ([DEFAULT] rbac_service_project_name),'
            ' or "admin" in system scope.' % (SERVICE_ROLE, service_project))


class ServiceToken:
    """The API's token for its calls to conductors, shared by its threads
    (keystoneauth's plugins lock around re-authentication)."""

    def __init__(self, conf: cfg.ConfigOpts, verify: tls.Verify,
                 cert: tls.ClientCert) -> None:
        """
        :raises ServiceAuthMissing: no plugin or a required option unset.
        """
        group = json_rpc_conf.GROUP
        try:
            auth = ks_loading.load_auth_from_conf_options(conf, group)
        except ks_exc.MissingRequiredOptions as exc:
            raise ServiceAuthMissing(reason='%s unset' % ', '.join(
                '[json_rpc] %s' % opt.dest for opt in exc.options)) from exc
        except ks_exc.NoMatchingPlugin as exc:
            raise ServiceAuthMissing(reason='no auth plugin named "%s"'
                                     % exc.name) from exc
        if auth is None:
            raise ServiceAuthMissing(reason='[json_rpc] auth_type is unset')
        self._url = getattr(conf[group], 'auth_url', None) or '(unset)'
        project = getattr(conf[group], 'project_name', None)
        if project and project != conf.rbac_service_project_name:
            # Conductors serve the service role in that project only.
            LOG.warning('[json_rpc] project_name is "%(mine)s", but '
                        'conductors serve the service role only in project '
                        '"%(theirs)s" ([DEFAULT] rbac_service_project_name): '
                        'set the same name in both, or every call to a '
                        'conductor is refused.',
                        {'mine': project,
                         'theirs': conf.rbac_service_project_name})
        self._session = ks_session.Session(
            auth=auth, verify=verify, cert=cert,
            timeout=conf[group].timeout)

    def headers(self) -> dict[str, str]:
        """``X-Auth-Token`` for one call.

        :raises KeystoneUnavailable: Keystone refused or did not answer.
        """
        try:
            token = self._session.get_token()
        except ks_exc.ClientException as exc:
            raise KeystoneUnavailable(url=self._url, reason=exc) from exc
        return {'X-Auth-Token': token or ''}

    def invalidate(self) -> None:
        """Forget the token (a conductor refused it as expired or
        revoked): the next call gets a new one."""
        self._session.invalidate()
