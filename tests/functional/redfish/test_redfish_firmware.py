# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` firmware interface against the real sushy-emulator:
``manage`` records the BMC's firmware versions, and
``GET /v1/nodes/{node}/firmware`` shows what the emulator itself serves.

The emulator's fake driver gives its System no ``BiosVersion`` and its
Manager a ``FirmwareVersion`` and a ``Model``; behind inventory_emulator.py
the System has a ``BiosVersion`` too.
"""

import pytest

from tests.functional.conductor.flows import settled
from tests.functional.redfish.emulator import Emulator
from tests.functional.redfish.emulator import Inventory

V = {'X-OpenStack-Ironic-API-Version': '1.114'}
BIOS = 'U46 v1.62 (03/14/2026)'


@pytest.fixture
def conf(ferrum_conf):
    ferrum_conf.set_override('enabled_firmware_interfaces',
                             ['redfish', 'no-firmware'])
    return ferrum_conf


@pytest.fixture(scope='module')
def bios_emulator(tmp_path_factory):
    emu = Emulator(tmp_path_factory.mktemp('redfish-bios'), systems=1,
                   inventory=Inventory(bios_version=BIOS))
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def client(redfish_api):
    return redfish_api


def _manage(client, db, driver_info):
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'redfish', 'driver_info': driver_info})
    assert response.status_code == 201, response.get_data(as_text=True)
    node = response.get_json()
    assert node['firmware_interface'] == 'redfish'
    response = client.put('/v1/nodes/%s/states/provision' % node['uuid'],
                          headers=V, json={'target': 'manage'})
    assert response.status_code == 202, response.get_data(as_text=True)
    settled(db, node['uuid'], 'manageable', timeout=60)
    response = client.get('/v1/nodes/%s/firmware' % node['uuid'], headers=V)
    assert response.status_code == 200, response.get_data(as_text=True)
    return {c['component']: c for c in response.get_json()['firmware']}


def _manager(emulator, uuid):
    system = emulator.system(uuid)
    return emulator.get(system['Links']['ManagedBy'][0]['@odata.id'])


def _shown(component):
    return {key: component[key] for key in (
        'initial_version', 'current_version', 'last_version_flashed',
        'vendor', 'model', 'serial_number')}


def test_manage_records_the_bmc_firmware(client, db, emulator, system):
    manager = _manager(emulator, system)
    assert manager['FirmwareVersion']
    assert emulator.system(system).get('BiosVersion') is None
    found = _manage(client, db, emulator.driver_info(system))
    assert set(found) == {'bmc'}  # no BiosVersion: no bios component
    assert _shown(found['bmc']) == {
        'initial_version': manager['FirmwareVersion'],
        'current_version': manager['FirmwareVersion'],
        'last_version_flashed': None, 'vendor': None,
        'model': manager['Model'], 'serial_number': None}


def test_manage_records_the_bios_version(client, db, bios_emulator):
    system = bios_emulator.uuids[0]
    assert bios_emulator.system(system)['BiosVersion'] == BIOS
    found = _manage(client, db, bios_emulator.driver_info(system))
    assert set(found) == {'bios', 'bmc'}
    assert _shown(found['bios']) == {
        'initial_version': BIOS, 'current_version': BIOS,
        'last_version_flashed': None, 'vendor': None, 'model': None,
        'serial_number': None}
    assert found['bmc']['current_version'] == _manager(
        bios_emulator, system)['FirmwareVersion']
