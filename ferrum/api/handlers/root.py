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


def v1() -> dict[str, Any]:
    return {'id': 'v1',
            'links': [_link('self', 'v1/'),
                      _link('describedby', 'v1/', '#doc')],
            'media_types': [{'base': 'application/json',
                             'type': 'application/vnd.openstack.ironic.v1'
                                     '+json'}],
            'nodes': [_link('self', 'v1', 'nodes', ''),
                      _link('bookmark', 'nodes', '')],
            'version': _version()}
