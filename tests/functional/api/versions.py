# SPDX-License-Identifier: Apache-2.0
"""Requests at a given microversion, as the version tests make them."""


def v(minor):
    """The header asking for version 1.``minor``."""
    return {'X-OpenStack-Ironic-API-Version': '1.%d' % minor}


def node(client, minor, **values):
    """A node created at 1.``minor`` (``fake-hardware`` unless ``values``
    names a driver); its body."""
    values.setdefault('driver', 'fake-hardware')
    response = client.post('/v1/nodes', headers=v(minor), json=values)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()
