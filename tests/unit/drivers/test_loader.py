# SPDX-License-Identifier: Apache-2.0
"""Driver loading: everything checked at start-up, errors name the culprit."""

import pytest

from ferrum.common import exception
from ferrum.conductor import service
from ferrum.drivers import loader


def test_fake_hardware_defaults(conf):
    registry = loader.DriverRegistry(conf)
    assert registry.defaults['fake-hardware'] == {
        'power': 'fake', 'management': 'fake', 'boot': 'fake',
        'deploy': 'fake', 'inspect': 'fake', 'vendor': 'fake',
        'network': 'noop', 'firmware': 'no-firmware'}


def test_explicit_default_interface(conf):
    conf.set_override('default_management_interface', 'noop')
    registry = loader.DriverRegistry(conf)
    assert registry.defaults['fake-hardware']['management'] == 'noop'


def test_unknown_hardware_type_is_named(conf):
    conf.set_override('enabled_hardware_types', ['fake-hardware', 'nope'])
    with pytest.raises(exception.DriverLoadError,
                       match='"nope" from entry point namespace '
                             'ferrum.hardware.types: no such entry point'):
        loader.DriverRegistry(conf)


def test_unknown_interface_is_named(conf):
    conf.set_override('enabled_power_interfaces', ['fake', 'ghost'])
    with pytest.raises(exception.DriverLoadError,
                       match='ghost.*ferrum.hardware.interfaces.power'):
        loader.DriverRegistry(conf)


def test_broken_entry_point_is_named(conf):
    conf.set_override('enabled_hardware_types', ['acme-broken'])
    with pytest.raises(exception.DriverLoadError,
                       match='"acme-broken".*ModuleNotFoundError'):
        loader.DriverRegistry(conf)


def test_incompatible_default_interface(conf):
    conf.set_override('default_deploy_interface', 'nope')
    with pytest.raises(exception.IncompatibleInterface,
                       match='deploy interface "nope"'):
        loader.DriverRegistry(conf)


def test_no_enabled_interface_of_a_kind(conf):
    conf.set_override('enabled_deploy_interfaces', [])
    with pytest.raises(exception.NoValidInterface,
                       match='fake-hardware supports deploy interfaces'):
        loader.DriverRegistry(conf)


def test_conductor_refuses_to_start_and_registers_nothing(conf, db):
    conf.set_override('enabled_hardware_types', ['nope'])
    svc = service.ConductorService(conf, db=db)
    with pytest.raises(exception.DriverLoadError, match='nope'):
        svc.start(start_periodics=False)
    from ferrum.objects import conductor as conductor_obj
    assert conductor_obj.list_all(db) == []


def test_third_party_hardware_type_loads_and_deploys(conf, db):
    """acme-ferrum (tests/thirdparty_driver) is pip-installed in the venv."""
    conf.set_override('enabled_hardware_types',
                      ['fake-hardware', 'acme-hardware'])
    conf.set_override('enabled_power_interfaces', ['fake', 'acme'])
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    try:
        from tests.functional.conductor.flows import settled
        from tests.functional.conductor.flows import to_state
        node = svc.manager.create_node({
            'driver': 'acme-hardware',
            'driver_info': {'acme_address': '10.0.0.1'}})
        assert (node.power_interface, node.management_interface) == (
            'acme', 'noop')
        node = to_state(svc.manager, db, node, 'active')
        assert node.driver_internal_info == {}
        svc.manager.change_node_power_state(node.uuid, 'power off')
        node = settled(db, node.id, 'active')
        assert node.driver_internal_info['acme_power'] == 'power off'
        with pytest.raises(exception.InterfaceNotSupported,
                           match='power interface "fake"'):
            svc.manager.create_node({'driver': 'acme-hardware',
                                     'power_interface': 'fake'})
    finally:
        svc.stop()


def test_the_kinds_the_config_knows_are_the_contracts():
    # The kinds are named by conf/ (which sits below drivers/); the bases
    # are paired with them in order, and the pairing must follow the names.
    from ferrum.conf import default as default_conf
    from ferrum.drivers import base
    assert {kind: cls.__name__ for kind, cls in base.INTERFACES.items()} == {
        kind: kind.capitalize() + 'Interface'
        for kind in default_conf.INTERFACE_KINDS}
