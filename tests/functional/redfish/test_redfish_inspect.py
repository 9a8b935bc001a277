# SPDX-License-Identifier: Apache-2.0
"""Inspection of redfish nodes through the API and a real conductor,
against the real sushy-emulator: plain (no processors, memory or disks),
and behind inventory_emulator.py, which adds processors and memory to it
(the disks are the emulator's own Storage options).

``baremetal node inspect``: manageable -> inspecting -> manageable.
"""

import logging

import pytest

from tests.functional.conductor.flows import settled
from tests.functional.redfish.emulator import Emulator
from tests.functional.redfish.emulator import Inventory

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
HARDWARE = Inventory(sockets=2, threads_per_socket=8, memory_gib=32,
                     disks_gib=(2, 480, 120))
#: Ironic's rule: the smallest disk of 4 GiB or more, less 1 GiB.
LOCAL_GB = 120 - 1
INSPECTED = {'cpus': 16, 'cpu_arch': 'x86_64', 'memory_mb': 32 * 1024,
             'local_gb': LOCAL_GB}


@pytest.fixture(scope='module')
def inventory_emulator(tmp_path_factory):
    emu = Emulator(tmp_path_factory.mktemp('redfish-inventory'), systems=3,
                   inventory=HARDWARE, nics=2)
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def client(redfish_api):
    return redfish_api


def _call(client, method, url, expect, **body):
    response = client.open(url, method=method, headers=V,
                           json=body if body else None)
    assert response.status_code == expect, response.get_data(as_text=True)
    return response.get_json()


def _manageable(client, db, driver_info, **fields):
    node = _call(client, 'POST', '/v1/nodes', 201, driver='redfish',
                 driver_info=driver_info, **fields)
    _call(client, 'PUT', '/v1/nodes/%s/states/provision' % node['uuid'],
          202, target='manage')
    settled(db, node['uuid'], 'manageable', timeout=60)
    return node['uuid']


def _inspect(client, db, uuid, ends='manageable'):
    _call(client, 'PUT', '/v1/nodes/%s/states/provision' % uuid, 202,
          target='inspect')
    settled(db, uuid, ends, timeout=90)
    return _call(client, 'GET', '/v1/nodes/%s' % uuid, 200)


def _ports(client, uuid):
    return _call(client, 'GET', '/v1/ports/detail?node=%s' % uuid,
                 200)['ports']


def test_inspection_fills_properties_and_a_port_per_nic_once(
        client, db, inventory_emulator):
    system = inventory_emulator.uuids[0]
    macs = inventory_emulator.macs(system)
    assert len(macs) == 2
    uuid = _manageable(client, db, inventory_emulator.driver_info(system),
                       properties={'capabilities': 'boot_mode:uefi'})
    checks = _call(client, 'GET', '/v1/nodes/%s/validate' % uuid, 200)
    assert checks['inspect'] == {'result': True, 'reason': None}

    node = _inspect(client, db, uuid)
    assert node['inspect_interface'] == 'redfish'
    assert node['last_error'] is None
    assert node['properties'] == dict(INSPECTED,
                                      capabilities='boot_mode:uefi')
    assert 'inspection_missing' not in node['driver_internal_info']
    ports = _ports(client, uuid)
    assert sorted(port['address'] for port in ports) == macs
    assert all(port['pxe_enabled'] for port in ports)

    node = _inspect(client, db, uuid)
    assert node['properties'] == dict(INSPECTED,
                                      capabilities='boot_mode:uefi')
    again = _ports(client, uuid)
    assert sorted((p['uuid'], p['address']) for p in again) == sorted(
        (p['uuid'], p['address']) for p in ports)


def test_existing_ports_are_kept_and_another_nodes_mac_is_reported(
        client, db, inventory_emulator):
    system = inventory_emulator.uuids[1]
    first, second = inventory_emulator.macs(system)
    uuid = _manageable(client, db, inventory_emulator.driver_info(system))
    mine = _call(client, 'POST', '/v1/ports', 201, node_uuid=uuid,
                 address=first.upper(), pxe_enabled=False)
    other = _call(client, 'POST', '/v1/nodes', 201, driver='fake-hardware')
    _call(client, 'POST', '/v1/ports', 201, node_uuid=other['uuid'],
          address=second)

    node = _inspect(client, db, uuid)
    assert node['last_error'] is None
    assert node['properties'] == INSPECTED
    assert node['driver_internal_info']['inspection_missing'] == {
        'ports': 'MAC %s: already a port of node %s' % (second,
                                                        other['uuid'])}
    [kept] = _ports(client, uuid)
    assert (kept['uuid'], kept['address'], kept['pxe_enabled']) == (
        mine['uuid'], first, False)
    [theirs] = _ports(client, other['uuid'])
    assert theirs['address'] == second


def test_a_bmc_without_processors_memory_or_disks_says_so(
        client, db, emulator, system, caplog):
    assert 'Processors' not in emulator.system(system)
    uuid = _manageable(client, db, emulator.driver_info(system),
                       properties={'memory_mb': 4096})
    with caplog.at_level(logging.WARNING, 'ferrum.drivers.redfish'):
        node = _inspect(client, db, uuid)
    assert node['last_error'] is None
    # What the BMC did not report keeps the value it had.
    assert node['properties'] == {'memory_mb': 4096}
    missing = node['driver_internal_info']['inspection_missing']
    assert sorted(missing) == ['cpu_arch', 'cpus', 'local_gb', 'memory_mb']
    assert 'Processors' in missing['cpus']
    assert 'TotalSystemMemoryGiB' in missing['memory_mb']
    assert 'Storage' in missing['local_gb']
    assert [p['address'] for p in _ports(client, uuid)] == emulator.macs(
        system)
    [line] = [r.getMessage() for r in caplog.records
              if 'did not find' in r.getMessage()]
    assert uuid in line and 'cpu_arch, cpus, local_gb, memory_mb' in line
    assert emulator.password not in caplog.text


def test_a_bmc_dying_during_inspection_fails_it_clearly(
        client, db, tmp_path):
    emu = Emulator(tmp_path / 'bmc', inventory=HARDWARE,
                   crash_on='/Processors')
    emu.start()
    try:
        uuid = _manageable(client, db, emu.driver_info(emu.uuids[0]))
        node = _inspect(client, db, uuid, ends='inspect failed')
        assert node['last_error'].startswith('Inspection failed: BMC %s '
                                             'did not answer' % emu.url)
        assert 'inspect the node again' in node['last_error']
        assert node['properties'] == {}
        assert _ports(client, uuid) == []

        emu.crash_on = None
        emu.start()
        node = _inspect(client, db, uuid)
        assert (node['last_error'], node['properties']) == (None, INSPECTED)
    finally:
        emu.stop()


def test_refused_credentials_fail_inspection_naming_the_fields(
        client, db, inventory_emulator):
    system = inventory_emulator.uuids[2]
    uuid = _manageable(client, db, inventory_emulator.driver_info(system))
    response = client.patch('/v1/nodes/%s' % uuid, headers=V, json=[{
        'op': 'replace', 'path': '/driver_info/redfish_password',
        'value': 'Wr0ng-s3cret'}])
    assert response.status_code == 200, response.get_data(as_text=True)

    node = _inspect(client, db, uuid, ends='inspect failed')
    assert 'redfish_username and redfish_password' in node['last_error']
    assert 'Wr0ng-s3cret' not in node['last_error']
    assert (node['properties'], _ports(client, uuid)) == ({}, [])
