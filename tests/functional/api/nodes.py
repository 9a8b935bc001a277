# SPDX-License-Identifier: Apache-2.0
"""Nodes through the API, as the node, VIF, agent and deletion tests make
them and read their errors."""

import json

#: The microversion these tests speak (owner and lessee, 1.65).
V = {'X-OpenStack-Ironic-API-Version': '1.65'}


def fault(response):
    """The message of an Ironic-shaped error body."""
    return json.loads(response.get_json()['error_message'])['faultstring']


def create(client, **values):
    """A node created through ``client`` (``fake-hardware`` unless
    ``values`` names a driver); its body."""
    values.setdefault('driver', 'fake-hardware')
    response = client.post('/v1/nodes', json=values, headers=V)
    assert response.status_code == 201, response.get_data(as_text=True)
    return response.get_json()
