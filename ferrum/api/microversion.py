# SPDX-License-Identifier: Apache-2.0
"""API microversions: the list of versions, and per-request negotiation.

A client asks for a version with ``X-OpenStack-Ironic-API-Version: 1.N``
or ``OpenStack-API-Version: baremetal 1.N`` (``latest`` means the maximum).
No header means the minimum, as in Ironic. A version outside the range is
answered with 406 and the supported range.

To add a version: append it to ``VERSIONS`` with a one-line note, record it
in ``doc/api-versions.md``, and gate the new behaviour on
``request_version() >= (1, N)``. Claim a version only once everything it
stands for is implemented.
"""

import flask
import microversion_parse

from ferrum.common import exception

#: (minor version, what it added). The API serves 1.1 up to the last one.
VERSIONS: tuple[tuple[int, str], ...] = (
    (1, 'Initial version: nodes, version discovery, errors.'),
)

MIN_VERSION = (1, VERSIONS[0][0])
MAX_VERSION = (1, VERSIONS[-1][0])
SERVICE_TYPE = 'baremetal'
LEGACY_HEADER = 'X-OpenStack-Ironic-API-Version'


class NotAcceptableVersion(exception.FerrumException):
    msg_fmt = ('Version %(requested)s was requested but the minor version is '
               'not supported by this service. The supported version range '
               'is: [%(min)s, %(max)s].')
    code = 406


def as_string(version: tuple[int, int]) -> str:
    return '%d.%d' % version


def negotiate(headers: dict[str, str]) -> tuple[int, int]:
    """The version a request asks for.

    :raises NotAcceptableVersion: the version is outside the range.
    :raises InvalidParameterValue: the header cannot be parsed.
    """
    requested = microversion_parse.get_version(
        headers, service_type=SERVICE_TYPE, legacy_headers=[LEGACY_HEADER])
    if requested is None:
        return MIN_VERSION
    if requested.strip().lower() == 'latest':
        return MAX_VERSION
    try:
        parsed = microversion_parse.parse_version_string(requested)
    except (TypeError, ValueError):
        raise exception.InvalidParameterValue(
            reason='Invalid API version "%s"; send "1.N" or "latest".'
                   % requested)
    version = (parsed.major, parsed.minor)
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptableVersion(requested=requested,
                                   min=as_string(MIN_VERSION),
                                   max=as_string(MAX_VERSION))
    return version


def request_version() -> tuple[int, int]:
    """The negotiated version of the current request."""
    version: tuple[int, int] = flask.g.api_version
    return version


def add_headers(response: flask.Response,
                version: tuple[int, int] | None) -> None:
    """Version headers on every response, as Ironic sends them."""
    response.headers['X-OpenStack-Ironic-API-Minimum-Version'] = as_string(
        MIN_VERSION)
    response.headers['X-OpenStack-Ironic-API-Maximum-Version'] = as_string(
        MAX_VERSION)
    if version is not None:
        response.headers[LEGACY_HEADER] = as_string(version)
        response.headers['OpenStack-API-Version'] = '%s %s' % (
            SERVICE_TYPE, as_string(version))
    response.headers['Vary'] = '%s, OpenStack-API-Version' % LEGACY_HEADER
