# SPDX-License-Identifier: Apache-2.0
"""/v1/drivers: the hardware types live conductors registered."""

import datetime
import json

import pytest
import sqlalchemy as sa

from ferrum.api.views import driver as driver_view
from ferrum.api.views import unserved
from ferrum.conf import default as default_conf
from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
HOST = 'test-conductor'
IRONIC_KINDS = {'bios', 'boot', 'console', 'deploy', 'inspect', 'management',
                'network', 'power', 'raid', 'rescue', 'storage', 'vendor'}


def _version(minor):
    return {'X-OpenStack-Ironic-API-Version': '1.%d' % minor}


def _fault(response):
    return json.loads(response.get_json()['error_message'])['faultstring']


def _register_other(db, hostname='other-host'):
    """A second conductor running fake-hardware and acme-hardware."""
    me = conductor_obj.register(db, hostname, 'rack-2', 60)
    conductor_obj.set_hardware_interfaces(db, me.id, [
        conductor_obj.HardwareInterface(
            hardware_type=hw_type, interface_type=kind, interface_name=name,
            default=default, properties={'%s_key' % name: 'From %s.' % name})
        for hw_type, kind, name, default in (
            ('fake-hardware', 'power', 'fake', True),
            ('fake-hardware', 'boot', 'fake', True),
            ('fake-hardware', 'boot', 'pxe', False),
            ('acme-hardware', 'power', 'acme', True))])
    return me


def _stop_heartbeat(db, conf, hostname):
    old = base.utcnow() - datetime.timedelta(
        seconds=conf.conductor.heartbeat_timeout + 1)
    with db.writer() as conn:
        conn.execute(sa.update(conductor_obj.TABLE)
                     .where(conductor_obj.TABLE.c.hostname == hostname)
                     .values(heartbeat_at=old))


def test_list_shows_hardware_types_with_hosts_and_links(client):
    response = client.get('/v1/drivers', headers=V)
    assert response.status_code == 200
    [driver] = response.get_json()['drivers']
    assert set(driver) == {'name', 'hosts', 'type', 'links', 'properties'}
    assert driver['name'] == 'fake-hardware'
    assert driver['hosts'] == [HOST]
    assert driver['type'] == 'dynamic'
    assert [link['rel'] for link in driver['links']] == ['self', 'bookmark']
    assert driver['links'][0]['href'].endswith('/v1/drivers/fake-hardware')
    assert driver['properties'][0]['href'].endswith(
        '/v1/drivers/fake-hardware/properties')


def test_detail_and_get_show_every_ironic_interface_kind(client):
    [listed] = client.get('/v1/drivers?detail=True',
                          headers=V).get_json()['drivers']
    fetched = client.get('/v1/drivers/fake-hardware', headers=V).get_json()
    assert listed == fetched
    kinds = {key[len('default_'):-len('_interface')] for key in fetched
             if key.startswith('default_')}
    assert kinds == IRONIC_KINDS
    assert all('enabled_%s_interfaces' % kind in fetched for kind in kinds)
    assert fetched['default_power_interface'] == 'fake'
    assert fetched['enabled_power_interfaces'] == ['fake']
    assert fetched['enabled_management_interfaces'] == ['fake', 'noop']
    assert fetched['default_console_interface'] == 'no-console'
    assert fetched['enabled_rescue_interfaces'] == ['no-rescue']
    assert fetched['default_storage_interface'] == 'noop'


def test_view_knows_the_version_of_every_kind():
    assert set(driver_view.FIELD_VERSIONS) >= {
        'default_%s_interface' % kind for kind in
        set(default_conf.INTERFACE_KINDS) | set(unserved.INTERFACES)}


@pytest.mark.parametrize('minor, absent', [
    (13, {'properties', 'type', 'default_power_interface'}),
    (30, {'default_storage_interface', 'enabled_rescue_interfaces',
          'default_bios_interface'}),
    (33, {'default_rescue_interface', 'enabled_bios_interfaces'}),
    (38, {'default_bios_interface'}),
])
def test_fields_follow_the_microversion(client, minor, absent):
    driver = client.get('/v1/drivers/fake-hardware',
                        headers=_version(minor)).get_json()
    assert driver['name'] == 'fake-hardware'
    assert not absent & set(driver)
    assert ('default_power_interface' in driver) == (minor >= 30)


@pytest.mark.parametrize('query', ['detail=true', 'type=dynamic'])
def test_detail_and_type_need_1_30(client, query):
    response = client.get('/v1/drivers?' + query, headers=_version(29))
    assert response.status_code == 406
    assert '1.30' in _fault(response)


def test_type_filter(client):
    def names(query, headers=V):
        response = client.get('/v1/drivers?' + query, headers=headers)
        assert response.status_code == 200
        return [d['name'] for d in response.get_json()['drivers']]

    assert names('type=dynamic') == ['fake-hardware']
    # ferrum, like Ironic since Rocky, has no classic drivers.
    assert names('type=classic') == []
    response = client.get('/v1/drivers?type=modern', headers=V)
    assert response.status_code == 400
    assert '"classic" or "dynamic"' in _fault(response)


def test_fields_pick_and_always_keep_links(client):
    [driver] = client.get('/v1/drivers?fields=name,default_boot_interface',
                          headers=V).get_json()['drivers']
    assert set(driver) == {'name', 'default_boot_interface', 'links'}
    assert driver['default_boot_interface'] == 'fake'
    one = client.get('/v1/drivers/fake-hardware?fields=hosts',
                     headers=V).get_json()
    assert set(one) == {'hosts', 'links'}
    for query in ('fields=name&detail=true', 'fields=colour',
                  'detail=maybe'):
        response = client.get('/v1/drivers?' + query, headers=V)
        assert response.status_code == 400, query
    response = client.get('/v1/drivers?fields=default_bios_interface',
                          headers=_version(39))
    assert response.status_code == 400
    assert 'default_bios_interface' in _fault(response)


def test_properties_of_the_default_interfaces(client):
    response = client.get('/v1/drivers/fake-hardware/properties', headers=V)
    assert response.status_code == 200
    properties = response.get_json()
    assert set(properties) == {'fake_fail', 'fake_async', 'fake_secret'}
    assert properties['fake_fail'].startswith('Optional.')


@pytest.mark.parametrize('path', ['/v1/drivers/ipmi',
                                  '/v1/drivers/ipmi/properties'])
def test_unknown_driver_is_an_ironic_404(client, path):
    response = client.get(path, headers=V)
    assert response.status_code == 404
    fault = json.loads(response.get_json()['error_message'])
    assert fault['faultcode'] == 'Client'
    assert '"ipmi"' in fault['faultstring']


def test_a_second_conductor_adds_hosts_types_and_interfaces(client, db):
    _register_other(db)
    drivers = client.get('/v1/drivers?detail=1', headers=V).get_json()[
        'drivers']
    by_name = {d['name']: d for d in drivers}
    assert [d['name'] for d in drivers] == ['acme-hardware', 'fake-hardware']
    assert by_name['fake-hardware']['hosts'] == ['other-host', HOST]
    assert by_name['acme-hardware']['hosts'] == ['other-host']
    # Enabled interfaces are the union; other-host's name sorts first, so
    # its preference order leads.
    assert by_name['fake-hardware']['enabled_boot_interfaces'] == [
        'fake', 'pxe', 'noop']
    assert by_name['acme-hardware']['default_power_interface'] == 'acme'
    properties = client.get('/v1/drivers/fake-hardware/properties',
                            headers=V).get_json()
    assert {'fake_key', 'fake_secret'} <= set(properties)
    assert 'pxe_key' not in properties  # pxe is not a default


def test_a_dead_conductor_leaves_the_hosts(client, db, conf):
    _register_other(db)
    _stop_heartbeat(db, conf, 'other-host')
    [driver] = client.get('/v1/drivers', headers=V).get_json()['drivers']
    assert (driver['name'], driver['hosts']) == ('fake-hardware', [HOST])
    response = client.get('/v1/drivers/acme-hardware', headers=V)
    assert response.status_code == 404
    assert client.get('/v1/drivers/acme-hardware/properties',
                      headers=V).status_code == 404


def test_a_stopped_conductor_leaves_the_hosts(client, db):
    other = _register_other(db)
    conductor_obj.unregister(db, other.id)
    names = [d['name'] for d in client.get(
        '/v1/drivers', headers=V).get_json()['drivers']]
    assert names == ['fake-hardware']


def test_declared_secrets_are_masked_on_nodes(client):
    response = client.post('/v1/nodes', headers=V, json={
        'driver': 'fake-hardware',
        'driver_info': {'fake_secret': 's3cret', 'fake_fail': []}})
    assert response.status_code == 201, response.get_data(as_text=True)
    node = client.get('/v1/nodes/%s' % response.get_json()['uuid'],
                      headers=V).get_json()
    assert node['driver_info'] == {'fake_secret': '******', 'fake_fail': []}
