# SPDX-License-Identifier: Apache-2.0
"""Version discovery: ``GET /`` and ``GET /v1``, shaped as Ironic's."""

from typing import Any

from ferrum.api import listing
from ferrum.api import microversion


def _link(rel: str, *parts: str) -> dict[str, str]:
    return {'href': listing.base_url() + '/'.join(parts), 'rel': rel}


def _version() -> dict[str, Any]:
    return {'id': 'v1', 'links': [_link('self', 'v1/')], 'status': 'CURRENT',
            'min_version': microversion.as_string(microversion.MIN_VERSION),
            'version': microversion.as_string(microversion.MAX_VERSION)}


def root() -> dict[str, Any]:
    return {'name': 'OpenStack Ironic API',
            'description': 'ferrum, a bare-metal conductor speaking the '
                           'Ironic v1 API.',
            'default_version': _version(), 'versions': [_version()]}


#: Collections linked from /v1, with the minor version that added them.
#: Ironic's others (the ramdisk endpoints, its events, runbooks and
#: inspection rules) are not advertised: the first are for agents, the
#: rest not served.
_COLLECTIONS: tuple[tuple[str, int], ...] = (
    ('chassis', 1), ('nodes', 1), ('ports', 1), ('drivers', 1),
    ('portgroups', 23), ('volume', 32), ('conductors', 49),
    ('allocations', 52), ('deploy_templates', 55), ('shards', 82))
#: The API reference a client can read; ferrum serves Ironic's v1 API.
_API_REFERENCE = 'https://docs.openstack.org/api-ref/baremetal/'


def v1() -> dict[str, Any]:
    document: dict[str, Any] = {
        'id': 'v1',
        'links': [_link('self', 'v1/'),
                  {'href': _API_REFERENCE, 'rel': 'describedby',
                   'type': 'text/html'}],
        'media_types': {'base': 'application/json',
                        'type': 'application/vnd.openstack.ironic.v1+json'},
        'version': _version()}
    for name, minor in _COLLECTIONS:
        if microversion.at_least(minor):
            document[name] = [_link('self', 'v1', name, ''),
                              _link('bookmark', name, '')]
    # ferrum's extensions: at every version, and named as such so that a
    # client can tell them from Ironic's collections.
    document['leases'] = [_link('self', 'v1', 'leases', ''),
                          _link('bookmark', 'leases', '')]
    document['extensions'] = [{'name': 'leases', 'href': listing.base_url()
                               + 'v1/leases/', 'documentation':
                               'doc/leases.md',
                               'description': 'Time-bound, all-or-nothing '
                                              'reservations of nodes.'},
                              {'name': 'events', 'href': listing.base_url()
                               + 'v1/events', 'documentation':
                               'doc/observability.md',
                               'description': 'A feed of node, allocation '
                                              'and lease events '
                                              '(GET ?since=<id>).'}]
    return document
