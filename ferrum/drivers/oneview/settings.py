# SPDX-License-Identifier: Apache-2.0
"""The ``[oneview]`` options, checked and bundled as :class:`Settings`.

Importing this module needs no hpOneView, so the options are checked with
the same words whether or not the library is installed.
"""

import dataclasses
import logging
import os
import ssl
import urllib.parse
from typing import Any

from oslo_config import cfg

from ferrum.drivers.oneview import errors

LOG = logging.getLogger(__name__)

UNREADABLE_CA = ('tls_cacert_file %s is not a readable file; point it at '
                 'the CA certificate of the appliance')
UNUSABLE_CA = ('tls_cacert_file %s holds no CA certificate (%s); point it '
               'at the PEM file of the CA that signed the appliance\'s '
               'certificate')


@dataclasses.dataclass(frozen=True)
class Settings:
    """How to reach the appliance; ``repr`` hides the password."""

    address: str
    username: str
    password: str = dataclasses.field(repr=False)
    ca_file: str | None
    request_timeout: float
    task_timeout: int
    api_version: int

    @property
    def hponeview_config(self) -> dict[str, Any]:
        return {'ip': self.address,
                'credentials': {'userName': self.username,
                                'password': self.password},
                'api_version': self.api_version,
                # Falsy means "no verification" to hpOneView.
                'ssl_certificate': self.ca_file or False,
                'timeout': self.request_timeout}

    @property
    def wait(self) -> int:
        """hpOneView's task timeout: -1 waits without limit."""
        return self.task_timeout or -1


def address_of(manager_url: str) -> str:
    """``host[:port]`` from what operators write (hpOneView takes no URL)."""
    text = manager_url.strip()
    if '//' not in text:
        text = '//' + text
    parsed = urllib.parse.urlsplit(text)
    if not parsed.hostname:
        raise errors.OneViewConfigError(
            reason='manager_url "%s" names no host' % manager_url[:100])
    host = parsed.hostname
    if ':' in host:
        host = '[%s]' % host  # IPv6 literal
    return host if parsed.port is None else '%s:%d' % (host, parsed.port)


def settings_from(conf: cfg.ConfigOpts) -> Settings:
    """Check the [oneview] options and bundle them.

    :raises OneViewConfigError: a required option is missing.
    """
    group = conf.oneview
    missing = [name for name in ('manager_url', 'username', 'password')
               if not group[name]]
    if missing:
        raise errors.OneViewConfigError(reason='set %s' % ', '.join(missing))
    ca_file = group.tls_cacert_file or None
    if group.allow_insecure_connections:
        if ca_file:
            LOG.warning('[oneview] allow_insecure_connections is true, so '
                        'tls_cacert_file %s is ignored', ca_file)
        ca_file = None
    elif not ca_file:
        raise errors.OneViewConfigError(
            reason='set tls_cacert_file to the CA certificate of the '
                   'appliance (or, for a test appliance only, '
                   'allow_insecure_connections = true)')
    return Settings(address=address_of(group.manager_url),
                    username=group.username, password=group.password,
                    ca_file=ca_file, request_timeout=group.request_timeout,
                    task_timeout=group.task_timeout,
                    api_version=group.api_version)


def check_ca_file(ca_file: str) -> None:
    """Refuse a CA file that is not readable or holds no certificate.

    :raises OneViewConfigError: naming ``tls_cacert_file``.
    """
    if not (os.path.isfile(ca_file) and os.access(ca_file, os.R_OK)):
        raise errors.OneViewConfigError(reason=UNREADABLE_CA % ca_file)
    try:
        ssl.create_default_context(cafile=ca_file)
    except ssl.SSLError as exc:
        raise errors.OneViewConfigError(
            reason=UNUSABLE_CA % (ca_file, errors.reason(exc))) from None
