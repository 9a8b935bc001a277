# SPDX-License-Identifier: Apache-2.0
"""``/v1/nodes/{node}/firmware`` (1.86, 1.114) and the firmware interface
kind, on ``fake-hardware``: what the conductor records when a verification
ends and a cleaning starts, by Ironic's rule."""

import logging

import pytest
import sqlalchemy as sa

from ferrum.db import models
from ferrum.objects import node as node_obj
from tests.functional.api import versions
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state

_v = versions.v
_TABLE = models.table(models.FirmwareComponent)


@pytest.fixture
def conf(ferrum_conf):
    ferrum_conf.set_override('enabled_firmware_interfaces',
                             ['fake', 'no-firmware'])
    return ferrum_conf


def _manageable(client, conductor, db, **values):
    body = versions.node(client, 114, **values)
    return to_state(conductor.manager, db,
                    node_obj.Node.get(db, body['uuid']), 'manageable')


def _firmware(client, node, minor=114, query=''):
    response = client.get('/v1/nodes/%s/firmware%s' % (node.uuid, query),
                          headers=_v(minor))
    assert response.status_code == 200, response.get_data(as_text=True)
    return {c['component']: c for c in response.get_json()['firmware']}


def _rows(db, node):
    with db.reader() as conn:
        return conn.execute(sa.select(sa.func.count()).where(
            _TABLE.c.node_id == node.id)).scalar()


def test_verification_records_the_components(client, conductor, db):
    node = _manageable(client, conductor, db, firmware_interface='fake',
                       driver_info={'fake_firmware': {'bios': '1.0',
                                                      'bmc': '2.0'}})
    shown = _firmware(client, node)
    assert set(shown) == {'bios', 'bmc'}
    assert {key: value for key, value in shown['bios'].items()
            if key != 'created_at'} == {
        'component': 'bios', 'initial_version': '1.0',
        'current_version': '1.0', 'last_version_flashed': None,
        'vendor': None, 'model': None, 'serial_number': None,
        'updated_at': None}
    assert shown['bios']['created_at'].endswith('+00:00')
    # Before 1.114 the identity fields are neither shown nor asked for.
    assert 'vendor' not in _firmware(client, node, 113)['bios']
    response = client.get('/v1/nodes/%s/firmware?fields=model,vendor'
                          % node.uuid, headers=_v(113))
    assert response.status_code == 400
    assert ('Fields model, vendor are not allowed in this API version. '
            'They require at least API version 1.114.'
            in response.get_json()['error_message'])
    # fields= keeps the timestamps, as Ironic's schema requires them.
    response = client.get('/v1/nodes/%s/firmware?fields=current_version'
                          % node.uuid, headers=_v(114))
    assert response.get_json()['firmware'] == [
        {'current_version': shown[name]['current_version'],
         'created_at': shown[name]['created_at'], 'updated_at': None}
        for name in ('bios', 'bmc')]


def test_cleaning_records_a_new_version_as_flashed(client, conductor, db):
    node = _manageable(client, conductor, db, firmware_interface='fake',
                       automated_clean=True,
                       driver_info={'fake_firmware': {'bios': '1.0',
                                                      'bmc': '2.0'}})
    response = client.patch('/v1/nodes/%s' % node.uuid, headers=_v(114),
                            json=[{'op': 'replace',
                                   'path': '/driver_info/fake_firmware/bios',
                                   'value': '1.1'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    settled(db, node.id, 'available')
    shown = _firmware(client, node)
    assert (shown['bios']['initial_version'], shown['bios'][
        'current_version'], shown['bios']['last_version_flashed']) == (
        '1.0', '1.1', '1.1')
    assert shown['bios']['updated_at'] is not None
    # Unchanged: not written.
    assert shown['bmc']['last_version_flashed'] is None
    assert shown['bmc']['updated_at'] is None


def test_a_failed_reading_is_logged_and_stops_nothing(
        client, conductor, db, caplog):
    caplog.set_level(logging.WARNING, logger='ferrum.conductor.firmware')
    node = _manageable(client, conductor, db, firmware_interface='fake',
                       driver_info={'fake_fail': ['firmware'],
                                    'fake_firmware': {'bios': '1.0'}})
    assert node.provision_state == 'manageable'
    assert _firmware(client, node) == {}
    assert any(node.uuid in record.getMessage()
               and 'fake firmware failure' in record.getMessage()
               for record in caplog.records)


def test_no_firmware_reads_and_writes_nothing(client, conductor, db):
    node = _manageable(client, conductor, db,
                       firmware_interface='no-firmware',
                       driver_info={'fake_firmware': {'bios': '1.0'}})
    assert _firmware(client, node) == {}
    assert _rows(db, node) == 0


def test_the_interface_is_a_node_field_from_1_86(client, conductor, db):
    node = versions.node(client, 86, firmware_interface='no-firmware')
    response = client.patch('/v1/nodes/%s' % node['uuid'], headers=_v(86),
                            json=[{'op': 'replace',
                                   'path': '/firmware_interface',
                                   'value': 'fake'}])
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.get_json()['firmware_interface'] == 'fake'
    response = client.patch('/v1/nodes/%s' % node['uuid'], headers=_v(85),
                            json=[{'op': 'replace',
                                   'path': '/firmware_interface',
                                   'value': 'no-firmware'}])
    # As for every field before its version (see test_node.py).
    assert response.status_code == 400
    # fake-hardware supports fake and no-firmware only.
    response = client.post('/v1/nodes', headers=_v(86), json={
        'driver': 'fake-hardware', 'firmware_interface': 'redfish'})
    assert response.status_code == 400
    assert 'redfish' in response.get_json()['error_message']
    driver = client.get('/v1/drivers/fake-hardware',
                        headers=_v(86)).get_json()
    assert driver['enabled_firmware_interfaces'] == ['fake', 'no-firmware']
    assert driver['default_firmware_interface'] == 'fake'


def test_components_go_with_their_node(client, conductor, db):
    node = _manageable(client, conductor, db, firmware_interface='fake',
                       driver_info={'fake_firmware': {'bios': '1.0'}})
    assert _rows(db, node) == 1
    response = client.delete('/v1/nodes/%s' % node.uuid, headers=_v(114))
    assert response.status_code == 204
    assert _rows(db, node) == 0
