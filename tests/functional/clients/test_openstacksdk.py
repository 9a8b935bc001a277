# SPDX-License-Identifier: Apache-2.0
"""openstacksdk's baremetal proxy, unchanged, against a real ferrum.

The connection is what a standalone (no Keystone) user configures:
``auth_type='none'`` and a fixed ``baremetal_endpoint_override``; the SDK
discovers the microversion range from ``GET /`` itself. Waiting is the
SDK's own (``wait=True``, ``wait_for_nodes_provision_state``).
"""

import uuid
from typing import Any

import pytest
from openstack import exceptions as sdk_exc

from ferrum.api import microversion
from tests.functional.clients import session
from tests.functional.clients.session import DRIVER

HOST = 'ferrum-under-test'  # [DEFAULT] host in tests/functional/server.py


def _create(conn: Any, resource_class: str, **attrs: Any) -> Any:
    return conn.baremetal.create_node(driver=DRIVER,
                                      resource_class=resource_class, **attrs)


def _ids(nodes: Any) -> set[str]:
    return {node.id for node in nodes}


def test_discovers_the_microversion_range(conn):
    data = conn.baremetal.get_endpoint_data()
    assert data.min_microversion == (1, 1)
    assert data.max_microversion == microversion.MAX_VERSION == (1, 115)
    assert conn.baremetal.get_endpoint().rstrip('/').endswith('/v1')


def test_create_node_starts_in_enroll(conn):
    rc = session.unique('sdk-create')
    name = session.unique('sdk-node')
    node = _create(conn, rc, name=name, properties={'cpus': 4},
                   driver_info={'ipmi_password': 'secret', 'x': 'y'},
                   extra={'k': 'v'})
    assert node.provision_state == 'enroll'
    assert node.name == name
    assert node.driver == DRIVER
    assert node.resource_class == rc
    assert node.properties == {'cpus': 4}
    assert node.extra == {'k': 'v'}
    assert node.driver_info == {'ipmi_password': '******', 'x': 'y'}
    assert node.power_interface == 'fake'
    fetched = conn.baremetal.get_node(name)
    assert fetched.id == node.id
    assert conn.baremetal.find_node(name).id == node.id
    assert conn.baremetal.find_node(session.unique('missing'),
                                    ignore_missing=True) is None


def test_create_node_with_explicit_initial_states(conn):
    rc = session.unique('sdk-initial')
    # The SDK asks for 1.11 to create in enroll...
    enrolled = _create(conn, rc, provision_state='enroll')
    assert enrolled.provision_state == 'enroll'
    # ... and for "manageable" creates, then manages and waits itself.
    managed = _create(conn, rc, provision_state='manageable')
    assert managed.provision_state == 'manageable'
    assert conn.baremetal.get_node(managed.id).provision_state == 'manageable'
    # Nodes are created "available" only up to 1.10: the SDK asks for 1.10,
    # so no field newer than that (resource_class is 1.21) may be sent.
    available = conn.baremetal.create_node(driver=DRIVER,
                                           provision_state='available')
    assert available.provision_state == 'available'
    assert available.power_state is None
    conn.baremetal.delete_node(available)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_node(available.id)


def test_traits(conn):
    node = _create(conn, session.unique('sdk-traits'))
    conn.baremetal.set_node_traits(node, ['CUSTOM_A', 'HW_CPU_X86_VMX'])
    assert sorted(conn.baremetal.get_node(node.id).traits) == [
        'CUSTOM_A', 'HW_CPU_X86_VMX']
    conn.baremetal.add_node_trait(node, 'CUSTOM_B')
    assert conn.baremetal.remove_node_trait(node, 'CUSTOM_A')
    assert sorted(conn.baremetal.get_node(node.id).traits) == [
        'CUSTOM_B', 'HW_CPU_X86_VMX']
    # Ironic answers 404 for a trait the node does not have (the SDK's
    # ignore_missing only swallows a 400, so it does not apply).
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.remove_node_trait(node, 'CUSTOM_MISSING',
                                         ignore_missing=False)
    with pytest.raises(sdk_exc.BadRequestException):
        conn.baremetal.add_node_trait(node, 'not a valid trait')


def test_ports(conn, strict):
    node = _create(conn, session.unique('sdk-ports'))
    other = _create(conn, session.unique('sdk-ports'))
    address = session.unique_mac()
    port = conn.baremetal.create_port(
        node_id=node.id, address=address, extra={'a': 'b'},
        local_link_connection={'switch_id': '00:11:22:33:44:55',
                               'port_id': 'Ethernet1/1'},
        physical_network='physnet1', is_pxe_enabled=True)
    assert port.address == address
    assert port.node_id == node.id
    assert port.physical_network == 'physnet1'
    assert port.is_pxe_enabled is True
    assert conn.baremetal.get_port(port.id).address == address
    assert [p.id for p in conn.baremetal.ports(node_id=node.id)] == [port.id]
    assert [p.id for p in conn.baremetal.ports(node=node.name or node.id)
            ] == [port.id]
    assert [p.id for p in conn.baremetal.ports(address=address)] == [port.id]
    assert list(conn.baremetal.ports(node_id=other.id)) == []
    detailed = list(conn.baremetal.ports(details=True, node_id=node.id))
    assert detailed[0].extra == {'a': 'b'}

    updated = conn.baremetal.update_port(port, extra={'c': 'd'})
    assert updated.extra == {'c': 'd'}
    patched = conn.baremetal.patch_port(
        port, [{'op': 'add', 'path': '/extra/e', 'value': 'f'}])
    assert patched.extra == {'c': 'd', 'e': 'f'}
    # Two ports cannot share an address (Ironic answers 409).
    with pytest.raises(sdk_exc.ConflictException):
        strict.baremetal.create_port(node_id=other.id, address=address)
    conn.baremetal.delete_port(port, ignore_missing=False)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_port(port.id)


def test_power(conn):
    node = _create(conn, session.unique('sdk-power'))
    conn.baremetal.set_node_power_state(node, 'power on', wait=True,
                                        timeout=session.WAIT_TIMEOUT)
    assert conn.baremetal.get_node(node.id).power_state == 'power on'
    conn.baremetal.set_node_power_state(node, 'power off')
    fetched = conn.baremetal.wait_for_node_power_state(
        node, 'power off', timeout=session.WAIT_TIMEOUT)
    assert fetched.power_state == 'power off'
    with pytest.raises(sdk_exc.BadRequestException):
        conn.baremetal.set_node_power_state(node, 'explode')


def test_provisioning_journey(conn):
    rc = session.unique('sdk-journey')
    nodes = [_create(conn, rc) for _ in range(2)]
    for node in nodes:
        conn.baremetal.set_node_power_state(node, 'power off', wait=True,
                                            timeout=session.WAIT_TIMEOUT)
        conn.baremetal.set_node_provision_state(node, 'manage')
    managed = conn.baremetal.wait_for_nodes_provision_state(
        nodes, 'manageable', timeout=session.WAIT_TIMEOUT)
    assert {n.provision_state for n in managed} == {'manageable'}
    for node in nodes:
        conn.baremetal.set_node_provision_state(node, 'provide')
    available = conn.baremetal.wait_for_nodes_provision_state(
        nodes, 'available', timeout=session.WAIT_TIMEOUT)
    assert {n.provision_state for n in available} == {'available'}
    assert {n.power_state for n in available} == {'power off'}

    listed = conn.baremetal.nodes(provision_state='available',
                                  resource_class=rc, details=True)
    listed = list(listed)
    assert _ids(listed) == _ids(nodes)
    assert all(n.driver == DRIVER and n.conductor == HOST for n in listed)

    deployed = conn.baremetal.set_node_provision_state(
        nodes[0], 'active', wait=True, timeout=session.WAIT_TIMEOUT)
    assert deployed.provision_state == 'active'
    fetched = conn.baremetal.get_node(nodes[0].id)
    assert fetched.provision_state == 'active'
    assert fetched.target_provision_state is None
    assert fetched.power_state == 'power on'
    assert fetched.last_error is None
    assert _ids(conn.baremetal.nodes(provision_state='active',
                                     resource_class=rc)) == {nodes[0].id}

    undeployed = conn.baremetal.set_node_provision_state(
        nodes[0], 'deleted', wait=True, timeout=session.WAIT_TIMEOUT)
    assert undeployed.provision_state == 'available'
    assert conn.baremetal.get_node(nodes[0].id).power_state == 'power off'

    # An action the current state does not allow: 400, as Ironic's
    # InvalidStateRequested; the node is left as it was.
    with pytest.raises(sdk_exc.BadRequestException):
        conn.baremetal.set_node_provision_state(nodes[1], 'adopt')
    assert conn.baremetal.get_node(nodes[1].id).provision_state == (
        'available')


def test_maintenance_and_list_filters(conn):
    rc = session.unique('sdk-maint')
    first, second = _create(conn, rc), _create(conn, rc)
    conn.baremetal.set_node_maintenance(first, reason='broken fan')
    fetched = conn.baremetal.get_node(first.id)
    assert fetched.is_maintenance is True
    assert fetched.maintenance_reason == 'broken fan'
    assert _ids(conn.baremetal.nodes(is_maintenance=True,
                                     resource_class=rc)) == {first.id}
    assert _ids(conn.baremetal.nodes(is_maintenance=False,
                                     resource_class=rc)) == {second.id}
    assert _ids(conn.baremetal.nodes(provision_state='enroll',
                                     resource_class=rc, details=True)
                ) == {first.id, second.id}
    assert _ids(conn.baremetal.nodes(
        resource_class=session.unique('none'))) == set()
    assert _ids(conn.baremetal.nodes(driver=DRIVER, resource_class=rc)
                ) == {first.id, second.id}

    conn.baremetal.unset_node_maintenance(first)
    fetched = conn.baremetal.get_node(first.id)
    assert fetched.is_maintenance is False
    assert fetched.maintenance_reason is None
    assert _ids(conn.baremetal.nodes(is_maintenance=True,
                                     resource_class=rc)) == set()


def test_list_pagination_and_fields(conn):
    rc = session.unique('sdk-pages')
    created = {_create(conn, rc).id for _ in range(5)}
    # The SDK follows the "next" links itself.
    assert _ids(conn.baremetal.nodes(resource_class=rc, limit=2)) == created
    partial = list(conn.baremetal.nodes(resource_class=rc,
                                        fields=['uuid', 'power_state']))
    assert _ids(partial) == created
    assert all(n.driver is None for n in partial)


def test_update_and_patch_node(conn):
    node = _create(conn, session.unique('sdk-update'),
                   name=session.unique('sdk-old'))
    new_name = session.unique('sdk-new')
    updated = conn.baremetal.update_node(node, name=new_name,
                                         extra={'rack': '12'},
                                         description='row 3')
    assert updated.name == new_name
    assert updated.extra == {'rack': '12'}
    assert updated.description == 'row 3'
    patched = conn.baremetal.patch_node(node, [
        {'op': 'add', 'path': '/properties/memory_mb', 'value': 4096},
        {'op': 'remove', 'path': '/extra/rack'},
        {'op': 'replace', 'path': '/owner', 'value': 'project-a'}])
    assert patched.properties['memory_mb'] == 4096
    assert patched.extra == {}
    assert patched.owner == 'project-a'
    fetched = conn.baremetal.get_node(new_name)
    assert fetched.owner == 'project-a'
    # Read-only fields and unknown paths are refused.
    with pytest.raises(sdk_exc.BadRequestException):
        conn.baremetal.patch_node(node, [
            {'op': 'replace', 'path': '/provision_state',
             'value': 'active'}])
    with pytest.raises(sdk_exc.BadRequestException):
        conn.baremetal.patch_node(node, [
            {'op': 'add', 'path': '/no_such_field', 'value': 1}])


def test_validate_node(conn):
    node = _create(conn, session.unique('sdk-validate'))
    results = conn.baremetal.validate_node(node)
    for interface in ('boot', 'deploy', 'power', 'management'):
        assert results[interface].result is True, (interface, results)
    failing = _create(conn, session.unique('sdk-validate'),
                      driver_info={'fake_fail': ['validate']})
    with pytest.raises(sdk_exc.ValidationException):
        conn.baremetal.validate_node(failing, required=('power',))
    results = conn.baremetal.validate_node(failing, required=())
    assert results['power'].result is False
    assert results['power'].reason


def test_boot_device(conn):
    node = _create(conn, session.unique('sdk-boot'))
    supported = conn.baremetal.get_node_supported_boot_devices(node)
    assert {'pxe', 'disk'} <= set(supported['supported_boot_devices'])
    conn.baremetal.set_node_boot_device(node, 'pxe', persistent=True)
    assert conn.baremetal.get_node_boot_device(node) == {
        'boot_device': 'pxe', 'persistent': True}
    with pytest.raises(sdk_exc.BadRequestException):
        conn.baremetal.set_node_boot_device(node, 'floppy')


def test_drivers(conn):
    names = [d.name for d in conn.baremetal.drivers()]
    assert DRIVER in names
    detailed = {d.name: d for d in conn.baremetal.drivers(details=True)}
    fake = detailed[DRIVER]
    assert HOST in fake.hosts
    assert 'fake' in fake.enabled_power_interfaces
    assert fake.default_power_interface == 'fake'
    driver = conn.baremetal.get_driver(DRIVER)
    assert driver.name == DRIVER
    assert HOST in driver.hosts
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_driver('no-such-driver')


def test_conductors(conn):
    conductors = {c.hostname: c for c in conn.baremetal.conductors()}
    assert conductors[HOST].alive is True
    conductor = conn.baremetal.get_conductor(HOST)
    assert conductor.hostname == HOST
    assert DRIVER in conductor.drivers
    assert conductor.conductor_group == ''
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_conductor('no-such-host')


def test_delete_node(conn, strict):
    rc = session.unique('sdk-delete')
    enrolled = _create(conn, rc)
    port = conn.baremetal.create_port(node_id=enrolled.id,
                                      address=session.unique_mac())
    conn.baremetal.delete_node(enrolled, ignore_missing=False)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_node(enrolled.id)
    # A node's ports go with it.
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_port(port.id)
    assert conn.baremetal.delete_node(enrolled.id) is None

    # Ironic refuses to delete a node that has an instance (409
    # NodeAssociated), whatever its state.
    associated = _create(conn, rc, instance_id=str(uuid.uuid4()))
    with pytest.raises(sdk_exc.ConflictException):
        strict.baremetal.delete_node(associated, ignore_missing=False)
    conn.baremetal.update_node(associated, instance_id=None)
    conn.baremetal.delete_node(associated, ignore_missing=False)

    available = _create(conn, rc)
    conn.baremetal.set_node_provision_state(available, 'manage', wait=True,
                                            timeout=session.WAIT_TIMEOUT)
    conn.baremetal.set_node_provision_state(available, 'provide', wait=True,
                                            timeout=session.WAIT_TIMEOUT)
    # Ironic deletes an available node ([conductor]
    # allow_deleting_available_nodes, true by default)...
    conn.baremetal.delete_node(available, ignore_missing=False)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_node(available.id)
    # ... but not an active one outside maintenance.
    active = _create(conn, rc)
    for target in ('manage', 'provide', 'active'):
        conn.baremetal.set_node_provision_state(
            active, target, wait=True, timeout=session.WAIT_TIMEOUT)
    with pytest.raises(sdk_exc.ConflictException):
        strict.baremetal.delete_node(active, ignore_missing=False)
    conn.baremetal.set_node_maintenance(active, reason='retire')
    conn.baremetal.delete_node(active, ignore_missing=False)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_node(active.id)


def test_errors_carry_the_server_message(conn):
    missing = session.unique('missing')
    with pytest.raises(sdk_exc.NotFoundException) as raised:
        conn.baremetal.get_node(missing)
    assert missing in str(raised.value)


def test_node_firmware(conn):
    node = _create(conn, session.unique('sdk-firmware'),
                   firmware_interface='fake',
                   driver_info={'fake_firmware': {'bios': '2.4.1'}},
                   provision_state='manageable')
    components = conn.baremetal.list_node_firmware(node)['firmware']
    assert [(c['component'], c['current_version'])
            for c in components] == [('bios', '2.4.1')]
