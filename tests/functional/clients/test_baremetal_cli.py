# SPDX-License-Identifier: Apache-2.0
"""The real ``baremetal`` CLI (python-ironicclient) against a real ferrum.

The CLI runs as an operator runs it without Keystone: ``--os-endpoint URL
--os-auth-type none``, in an environment with no ``OS_*`` variables and no
``clouds.yaml``, negotiating the microversion itself. Assertions are on
its ``-f json`` output, parsed.
"""

from typing import Any

from tests.functional.clients import session
from tests.functional.clients.session import DRIVER
from tests.functional.clients.session import WAIT
from tests.functional.clients.session import Baremetal

HOST = 'ferrum-under-test'  # [DEFAULT] host in tests/functional/server.py
#: What ``GET /v1/nodes/{node}/validate`` reports on in Ironic: the node's
#: non-vendor interfaces (``firmware`` too since 1.86).
IRONIC_VALIDATED = {'bios', 'boot', 'console', 'deploy', 'inspect',
                    'management', 'network', 'power', 'raid', 'rescue',
                    'storage'}


def _create(baremetal: Baremetal, resource_class: str, *args: str
            ) -> dict[str, Any]:
    node: dict[str, Any] = baremetal.json(
        'node', 'create', '--driver', DRIVER, '--resource-class',
        resource_class, *args)
    return node


def test_node_create_show_set_unset(baremetal):
    rc, name = session.unique('cli-create'), session.unique('cli-node')
    node = _create(baremetal, rc, '--name', name,
                   '--driver-info', 'ipmi_password=secret',
                   '--driver-info', 'fake_async=[]',
                   '--property', 'cpus=4', '--property', 'memory_mb=2048',
                   '--extra', 'rack=r12')
    assert node['name'] == name
    assert node['provision_state'] == 'enroll'
    assert node['resource_class'] == rc
    assert node['driver'] == DRIVER
    assert node['driver_info'] == {'ipmi_password': '******',
                                   'fake_async': []}
    # The CLI sends KEY=VALUE values as JSON when they parse as JSON.
    assert node['properties'] == {'cpus': 4, 'memory_mb': 2048}
    assert node['extra'] == {'rack': 'r12'}

    shown = baremetal.json('node', 'show', name)
    assert shown['uuid'] == node['uuid']
    assert shown['conductor'] == HOST
    assert shown['traits'] == []
    fields = baremetal.json('node', 'show', node['uuid'],
                            '--fields', 'uuid', 'power_state')
    assert set(fields) == {'uuid', 'power_state'}

    baremetal('node', 'set', name, '--extra', 'row=r3', '--description',
              'spare', '--property', 'cpus=8', '--owner', 'project-a')
    shown = baremetal.json('node', 'show', name)
    assert shown['extra'] == {'rack': 'r12', 'row': 'r3'}
    assert shown['description'] == 'spare'
    assert shown['properties']['cpus'] == 8
    assert shown['owner'] == 'project-a'
    # The masked secret is left alone by a PATCH that does not touch it.
    assert shown['driver_info']['ipmi_password'] == '******'

    baremetal('node', 'unset', name, '--extra', 'rack', '--property',
              'memory_mb', '--description', '--owner')
    shown = baremetal.json('node', 'show', name)
    assert shown['extra'] == {'row': 'r3'}
    assert shown['properties'] == {'cpus': 8}
    assert shown['description'] is None
    assert shown['owner'] is None

    new_name = session.unique('cli-renamed')
    baremetal('node', 'set', name, '--name', new_name)
    assert baremetal.json('node', 'show', new_name)['uuid'] == node['uuid']
    assert 'could not be found' in baremetal.fails('node', 'show', name)


def test_traits_and_ports(baremetal):
    node = _create(baremetal, session.unique('cli-ports'))
    baremetal('node', 'add', 'trait', node['uuid'], 'CUSTOM_GPU',
              'HW_CPU_X86_VMX')
    traits = baremetal.json('node', 'trait', 'list', node['uuid'])
    assert sorted(t['traits'] for t in traits) == ['CUSTOM_GPU',
                                                   'HW_CPU_X86_VMX']
    baremetal('node', 'remove', 'trait', node['uuid'], 'CUSTOM_GPU')
    assert baremetal.json('node', 'show', node['uuid'])['traits'] == [
        'HW_CPU_X86_VMX']

    address = session.unique_mac()
    port = baremetal.json('port', 'create', address, '--node', node['uuid'],
                          '--extra', 'slot=s1', '--physical-network',
                          'physnet1', '--local-link-connection',
                          'switch_id=00:11:22:33:44:55',
                          '--local-link-connection', 'port_id=Eth1/1')
    assert port['address'] == address
    assert port['node_uuid'] == node['uuid']
    assert port['extra'] == {'slot': 's1'}
    assert port['physical_network'] == 'physnet1'
    assert port['local_link_connection'] == {
        'switch_id': '00:11:22:33:44:55', 'port_id': 'Eth1/1'}

    listed = baremetal.json('port', 'list', '--node', node['uuid'])
    assert listed == [{'uuid': port['uuid'], 'address': address}]
    long = baremetal.json('port', 'list', '--node', node['uuid'], '--long')
    assert long[0]['node_uuid'] == node['uuid']
    shown = baremetal.json('port', 'show', port['uuid'])
    assert shown['address'] == address
    by_address = baremetal.json('port', 'show', '--address', address)
    assert by_address['uuid'] == port['uuid']
    baremetal('port', 'set', port['uuid'], '--extra', 'cable=blue')
    assert baremetal.json('port', 'show', port['uuid'])['extra'] == {
        'slot': 's1', 'cable': 'blue'}
    # Ironic: 409 "A port with MAC address ... already exists."
    assert '(HTTP 409)' in baremetal.fails('port', 'create', address,
                                           '--node', node['uuid'])
    baremetal('port', 'delete', port['uuid'])
    assert baremetal.json('port', 'list', '--node', node['uuid']) == []


def test_port_group_with_two_ports(baremetal):
    node = _create(baremetal, session.unique('cli-bond'))
    name, address = session.unique('bond'), session.unique_mac()
    group = baremetal.json('port', 'group', 'create', '--node', node['uuid'],
                           '--name', name, '--address', address,
                           '--mode', '802.3ad', '--property', 'miimon=100',
                           '--extra', 'rack=r1', '--support-standalone-ports')
    assert group['name'] == name and group['address'] == address
    assert group['mode'] == '802.3ad'
    assert group['properties'] == {'miimon': 100}
    assert group['standalone_ports_supported'] is True
    ports = [baremetal.json('port', 'create', mac, '--node', node['uuid'],
                            '--port-group', group['uuid'])
             for mac in (address, session.unique_mac())]
    assert {p['portgroup_uuid'] for p in ports} == {group['uuid']}
    members = baremetal.json('port', 'list', '--port-group', name)
    assert sorted(p['uuid'] for p in members) == sorted(
        p['uuid'] for p in ports)

    listed = baremetal.json('port', 'group', 'list', '--node', node['uuid'])
    assert listed == [{'uuid': group['uuid'], 'address': address,
                       'name': name}]
    long = baremetal.json('port', 'group', 'list', '--address', address,
                          '--long')
    assert long[0]['node_uuid'] == node['uuid']
    baremetal('port', 'group', 'set', name, '--extra', 'row=r2',
              '--mode', 'balance-rr')
    shown = baremetal.json('port', 'group', 'show', group['uuid'])
    assert shown['extra'] == {'rack': 'r1', 'row': 'r2'}
    assert shown['mode'] == 'balance-rr'
    # Ironic: 400, the group still has ports.
    assert 'contains ports' in baremetal.fails('port', 'group', 'delete',
                                               name)
    for port in ports:
        baremetal('port', 'delete', port['uuid'])
    baremetal('port', 'group', 'delete', name)
    assert baremetal.json('port', 'group', 'list', '--node',
                          node['uuid']) == []


def test_provisioning_journey(baremetal):
    rc = session.unique('cli-journey')
    node = _create(baremetal, rc)
    uuid = node['uuid']

    baremetal('node', 'power', 'off', uuid)
    session.wait_until(
        lambda: baremetal.node(uuid)['power_state'] == 'power off',
        'node %s to power off' % uuid)
    assert baremetal.json('node', 'show', uuid)['power_state'] == 'power off'

    baremetal('node', 'manage', uuid, '--wait', WAIT)
    assert baremetal.node(uuid)['provision_state'] == 'manageable'
    baremetal('node', 'provide', uuid, '--wait', WAIT)
    shown = baremetal.json('node', 'show', uuid)
    assert shown['provision_state'] == 'available'
    assert shown['target_provision_state'] is None
    assert shown['last_error'] is None

    baremetal('node', 'deploy', uuid, '--wait', WAIT)
    shown = baremetal.json('node', 'show', uuid)
    assert shown['provision_state'] == 'active'
    assert shown['power_state'] == 'power on'
    listed = baremetal.json('node', 'list', '--provision-state', 'active',
                            '--resource-class', rc)
    assert [n['uuid'] for n in listed] == [uuid]

    baremetal('node', 'undeploy', uuid, '--wait', WAIT)
    shown = baremetal.json('node', 'show', uuid)
    assert shown['provision_state'] == 'available'
    assert shown['power_state'] == 'power off'

    # Ironic deletes an available node ([conductor]
    # allow_deleting_available_nodes, true by default).
    baremetal('node', 'delete', uuid)
    assert 'could not be found' in baremetal.fails('node', 'show', uuid)


def test_maintenance_and_list_filters(baremetal):
    rc = session.unique('cli-list')
    first = _create(baremetal, rc, '--name', session.unique('cli-first'))
    second = _create(baremetal, rc)

    baremetal('node', 'maintenance', 'set', first['uuid'], '--reason',
              'broken fan')
    shown = baremetal.json('node', 'show', first['uuid'])
    assert shown['maintenance'] is True
    assert shown['maintenance_reason'] == 'broken fan'

    listed = baremetal.json('node', 'list', '--resource-class', rc)
    assert {n['uuid'] for n in listed} == {first['uuid'], second['uuid']}
    assert set(listed[0]) == {'uuid', 'name', 'instance_uuid', 'power_state',
                              'provision_state', 'maintenance'}
    maintained = baremetal.json('node', 'list', '--maintenance',
                                '--resource-class', rc)
    assert [(n['uuid'], n['maintenance']) for n in maintained] == [
        (first['uuid'], True)]
    assert [n['uuid'] for n in baremetal.json(
        'node', 'list', '--no-maintenance', '--resource-class', rc)] == [
        second['uuid']]
    long = baremetal.json('node', 'list', '--provision-state', 'enroll',
                          '--resource-class', rc, '--long')
    by_uuid = {n['uuid']: n for n in long}
    assert set(by_uuid) == {first['uuid'], second['uuid']}
    assert by_uuid[first['uuid']]['maintenance_reason'] == 'broken fan'
    assert by_uuid[first['uuid']]['resource_class'] == rc
    assert by_uuid[second['uuid']]['driver'] == DRIVER
    assert baremetal.json('node', 'list', '--provision-state', 'available',
                          '--resource-class', rc) == []
    assert len(baremetal.json('node', 'list', '--resource-class', rc,
                              '--limit', '1')) == 1
    fields = baremetal.json('node', 'list', '--resource-class', rc,
                            '--fields', 'uuid', 'resource_class')
    assert fields and all(set(n) == {'uuid', 'resource_class'}
                          and n['resource_class'] == rc for n in fields)

    # The conductor filter (1.49): the nodes a conductor manages.
    assert {n['uuid'] for n in baremetal.json(
        'node', 'list', '--conductor', HOST, '--resource-class', rc)} == {
        first['uuid'], second['uuid']}
    assert baremetal.json('node', 'list', '--conductor', 'no-such-host',
                          '--resource-class', rc) == []

    baremetal('node', 'maintenance', 'unset', first['uuid'])
    shown = baremetal.json('node', 'show', first['uuid'])
    assert shown['maintenance'] is False
    assert shown['maintenance_reason'] is None


def test_validate_and_boot_device(baremetal):
    node = _create(baremetal, session.unique('cli-validate'))
    results = {r['Interface']: r for r in baremetal.json(
        'node', 'validate', node['uuid'])}
    for interface in ('boot', 'deploy', 'management', 'power'):
        assert results[interface]['Result'] is True, results
    # Ironic reports every interface but vendor, supported or not.
    assert IRONIC_VALIDATED <= set(results), results
    assert 'vendor' not in results

    baremetal('node', 'boot', 'device', 'set', node['uuid'], 'pxe',
              '--persistent')
    assert baremetal.json('node', 'boot', 'device', 'show',
                          node['uuid']) == {'boot_device': 'pxe',
                                            'persistent': True}
    supported = baremetal.json('node', 'boot', 'device', 'show',
                               node['uuid'], '--supported')
    assert {'pxe', 'disk'} <= set(
        supported['supported_boot_devices'].split(', '))
    assert 'floppy' in baremetal.fails('node', 'boot', 'device', 'set',
                                       node['uuid'], 'floppy')


def test_drivers(baremetal):
    drivers = baremetal.json('driver', 'list')
    assert {'name': DRIVER, 'hosts': HOST} in drivers
    shown = baremetal.json('driver', 'show', DRIVER)
    assert shown['name'] == DRIVER
    assert shown['hosts'] == HOST  # the CLI joins the list
    assert shown['default_power_interface'] == 'fake'
    assert 'fake' in shown['enabled_power_interfaces']
    properties = baremetal.json('driver', 'property', 'list', DRIVER)
    names = {p['property'] for p in properties}
    assert {'fake_fail', 'fake_async'} <= names
    assert all(p['description'] for p in properties)
    # Ironic: 404 "Could not find the following driver(s) or hardware
    # type(s): no-such-driver."
    error = baremetal.fails('driver', 'show', 'no-such-driver')
    assert '(HTTP 404)' in error and 'no-such-driver' in error


def test_conductors(baremetal):
    conductors = baremetal.json('conductor', 'list')
    assert {'hostname': HOST, 'conductor_group': '', 'alive': True} in (
        conductors)
    shown = baremetal.json('conductor', 'show', HOST)
    assert shown['hostname'] == HOST
    assert shown['alive'] is True
    assert DRIVER in shown['drivers']
    assert 'could not be found' in baremetal.fails('conductor', 'show',
                                                   'no-such-host')


def test_delete_enrolled_node(baremetal):
    node = _create(baremetal, session.unique('cli-delete'))
    port = baremetal.json('port', 'create', session.unique_mac(), '--node',
                          node['uuid'])
    baremetal('node', 'delete', node['uuid'])
    assert 'could not be found' in baremetal.fails('node', 'show',
                                                   node['uuid'])
    assert 'could not be found' in baremetal.fails('port', 'show',
                                                   port['uuid'])


def test_errors_are_reported_not_crashed_on(baremetal):
    missing = session.unique('missing')
    error = baremetal.fails('node', 'show', missing)
    assert missing in error and 'could not be found' in error
    error = baremetal.fails('node', 'create', '--driver', 'no-such-driver')
    assert 'no-such-driver' in error
    node = _create(baremetal, session.unique('cli-errors'))
    error = baremetal.fails('node', 'provide', node['uuid'])
    assert 'provide' in error and 'enroll' in error


def test_node_history_list_and_get(baremetal):
    """``baremetal node history`` (1.78), as the CLI negotiates it."""
    node = _create(baremetal, session.unique('cli-history'))
    baremetal('node', 'maintenance', 'set', node['uuid'], '--reason',
              'disk swap')
    baremetal('node', 'maintenance', 'unset', node['uuid'])
    listed = baremetal.json('node', 'history', 'list', node['uuid'])
    assert [entry['event'] for entry in listed] == [
        'Maintenance on: disk swap', 'Maintenance off']
    long = baremetal.json('node', 'history', 'list', node['uuid'], '--long')
    assert {entry['event_type'] for entry in long} == {'maintenance'}
    assert {entry['conductor'] for entry in long} == {HOST}
    one = baremetal.json('node', 'history', 'get', node['uuid'],
                         listed[0]['uuid'])
    assert one['event'] == 'Maintenance on: disk swap'
    assert one['severity'] == 'INFO'


def test_node_firmware_list(baremetal):
    node = _create(baremetal, session.unique('cli-firmware'),
                   '--firmware-interface', 'fake', '--driver-info',
                   'fake_firmware={"bios": "2.4.1", "bmc": "7.10"}')
    assert node['firmware_interface'] == 'fake'
    assert baremetal.json('node', 'firmware', 'list', node['uuid']) == []
    baremetal('node', 'manage', node['uuid'], '--wait', WAIT)
    listed = baremetal.json('node', 'firmware', 'list', node['uuid'])
    assert {(c['component'], c['initial_version'], c['current_version'])
            for c in listed} == {('bios', '2.4.1', '2.4.1'),
                                 ('bmc', '7.10', '7.10')}
    plain = _create(baremetal, session.unique('cli-firmware'))
    assert plain['firmware_interface'] == 'no-firmware'
