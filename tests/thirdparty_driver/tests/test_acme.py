# SPDX-License-Identifier: Apache-2.0
"""ACME's own tests, on ferrum's driver test kit alone (no conftest.py).

This is what doc/drivers.md shows a driver author: the kit's fixtures
(``ferrum_conf``, ``ferrum_conductor``, ``ferrum_enroll``), its flows and
its contract checks.
"""

import pytest

from ferrum.common import exception
from ferrum.objects import node as node_obj
from ferrum.testing import checks
from ferrum.testing import flows

import acme_ferrum


@pytest.fixture
def ferrum_conf(ferrum_conf):
    ferrum_conf.set_override('enabled_hardware_types', ['acme-hardware'])
    ferrum_conf.set_override('enabled_power_interfaces', ['acme'])
    ferrum_conf.set_override('enabled_deploy_interfaces', ['fake', 'acme'])
    return ferrum_conf


@pytest.mark.parametrize('cls', [acme_ferrum.AcmePower,
                                 acme_ferrum.AcmeDeploy])
def test_interfaces_keep_the_contract(cls):
    checks.check_interface(cls, driver_info={'acme_address': '10.0.0.9'})


def test_the_contract_check_catches_a_broken_interface():
    class Sloppy(acme_ferrum.AcmePower):
        secret_properties = frozenset({'acme_token'})

        def validate(self, task):
            raise KeyError('acme_address')

    with pytest.raises(checks.ContractError) as info:
        checks.check_interface(Sloppy)
    assert 'acme_token' in str(info.value)
    assert 'KeyError' in str(info.value)


def test_power_validation_names_the_missing_key(ferrum_enroll,
                                                ferrum_conductor):
    node = ferrum_enroll('acme-hardware')
    result = ferrum_conductor.manager.validate_driver_interfaces(node.uuid)
    assert result['power']['result'] is False
    assert 'acme_address' in result['power']['reason']


def test_async_deploy_finished_by_the_periodic_task(ferrum_enroll,
                                                     ferrum_conductor,
                                                     ferrum_db):
    node = ferrum_enroll('acme-hardware', deploy_interface='acme',
                         driver_info={'acme_address': '10.0.0.9'})
    manager = ferrum_conductor.manager
    node = flows.to_state(manager, ferrum_db, node, 'available')
    manager.do_provisioning_action(node.uuid, 'active')
    node = flows.settled(ferrum_db, node.id, 'wait call-back')
    deploy = ferrum_conductor.ctx.drivers.interfaces['deploy']['acme']

    deploy.check_writes(ferrum_conductor.ctx)  # still writing
    assert node_obj.Node.get(ferrum_db, node.id).provision_state == (
        'wait call-back')

    node.driver_internal_info['acme_progress'] = 100  # the image is written
    node.save()
    deploy.check_writes(ferrum_conductor.ctx)
    node = flows.settled(ferrum_db, node.id, 'active')
    assert node.power_state == 'power on'


def test_enrolling_an_unknown_interface_is_refused(ferrum_enroll):
    with pytest.raises(exception.InterfaceNotSupported):
        ferrum_enroll('acme-hardware', deploy_interface='nope')
