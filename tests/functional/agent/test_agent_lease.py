# SPDX-License-Identifier: Apache-2.0
"""A lease's end erases what the lessee left on the disk, through the real
agent, before the node is ``available`` again; the event feed says which
erase steps ran for which lease."""

import datetime
import time

from tests.functional.agent import nodes

MIB = 1024 * 1024
DEEP = 48 * MIB


def _lease(ferrum, uuid: str) -> dict:
    response = ferrum.api('GET', '/v1/leases/%s' % uuid)
    assert response.status_code == 200, response.text
    found: dict = response.json()
    return found


def _wait_lease(ferrum, uuid: str, status: str, timeout: float = 240):
    deadline = time.monotonic() + timeout
    lease = _lease(ferrum, uuid)
    while lease['status'] != status and time.monotonic() < deadline:
        time.sleep(0.1)
        lease = _lease(ferrum, uuid)
    assert lease['status'] == status, lease
    return lease


def test_a_lease_end_erases_the_disk_before_the_node_is_back(ferrum,
                                                              images):
    _made, served = images
    with nodes.enrolled(ferrum, served) as (box, node):
        uuid = node['uuid']
        ferrum.provision(uuid, 'provide')  # cleaned once, as any node
        ferrum.wait_state(uuid, 'available')
        end = (datetime.datetime.now(datetime.timezone.utc)
               + datetime.timedelta(seconds=15))
        response = ferrum.api('POST', '/v1/leases', json={
            'project': 'tenant-a', 'candidate_nodes': [uuid], 'count': 1,
            'end': end.strftime('%Y-%m-%dT%H:%M:%SZ')})
        assert response.status_code == 201, response.text
        lease = response.json()
        _wait_lease(ferrum, lease['uuid'], 'active')
        # What the tenant leaves on the machine.
        box.write_marker(0, b'tenant partition table' * 40)
        box.write_marker(DEEP, b'tenant data' * 100)

        _wait_lease(ferrum, lease['uuid'], 'ended')
        back = ferrum.node(uuid)
        assert back['provision_state'] == 'available'
        assert back['lessee'] is None
        assert box.read(0, MIB) == bytes(MIB)
        assert box.read(DEEP, 1100) == bytes(1100)

        response = ferrum.api('GET', '/v1/events?limit=1000')
        assert response.status_code == 200, response.text
        mine = [event for event in response.json()['events']
                if event['node_uuid'] == uuid
                and event['lease_uuid'] == lease['uuid']]
        texts = [event['event'] for event in mine]
        assert ('Cleaning for the end of lease %s of project tenant-a'
                % lease['uuid']) in texts
        assert 'Clean step deploy.erase_devices_metadata started' in texts
        assert 'Clean step deploy.erase_devices started' in texts
