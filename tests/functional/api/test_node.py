# SPDX-License-Identifier: Apache-2.0
"""Reading nodes: list, detail, get by UUID or name, secrets masked."""

import json

from ferrum.objects import node as node_obj


def test_list_detail_and_get(client, db):
    node = node_obj.Node.create(db, {
        'driver': 'fake-hardware', 'name': 'rack1-n1',
        'driver_info': {'ipmi_password': 's3cret', 'ipmi_address': '1.2.3.4'}})
    listed = client.get('/v1/nodes').get_json()['nodes']
    assert [n['uuid'] for n in listed] == [node.uuid]
    assert 'driver_info' not in listed[0]
    assert listed[0]['links'][0]['href'].endswith('/v1/nodes/' + node.uuid)
    detail = client.get('/v1/nodes/detail').get_json()['nodes'][0]
    assert detail['driver_info'] == {'ipmi_password': '******',
                                     'ipmi_address': '1.2.3.4'}
    for ident in (node.uuid, 'rack1-n1'):
        response = client.get('/v1/nodes/%s' % ident)
        assert response.status_code == 200
        assert response.get_json()['provision_state'] == 'enroll'
        assert 's3cret' not in response.get_data(as_text=True)
    assert client.head('/v1/nodes/%s' % node.uuid).status_code == 200


def test_missing_node_is_404(client):
    response = client.get('/v1/nodes/no-such-node')
    assert response.status_code == 404
    fault = json.loads(response.get_json()['error_message'])
    assert fault['faultstring'] == 'Node no-such-node could not be found.'
