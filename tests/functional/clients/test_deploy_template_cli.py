# SPDX-License-Identifier: Apache-2.0
"""``baremetal deploy template ...`` (python-ironicclient) against a real
ferrum, and a template's step run by ``baremetal node deploy``."""

import json

from tests.functional.clients import session
from tests.functional.clients.session import DRIVER
from tests.functional.clients.session import WAIT

BIOS = {'interface': 'bios', 'step': 'apply_configuration',
        'args': {'settings': [{'name': 'LogicalProc', 'value': 'Enabled'}]},
        'priority': 150}


def _name(prefix):
    """A unique trait name: CUSTOM_ and capitals."""
    return 'CUSTOM_' + session.unique(prefix).upper().replace('-', '_')


def test_create_list_show_set_unset_delete(baremetal):
    name = _name('cli-dt')
    created = baremetal.json('deploy', 'template', 'create', name,
                             '--steps', json.dumps([BIOS]),
                             '--extra', 'rack=r1')
    assert created['name'] == name
    assert created['steps'] == [BIOS]
    assert created['extra'] == {'rack': 'r1'}
    uuid = created['uuid']

    listed = baremetal.json('deploy', 'template', 'list')
    assert {'uuid': uuid, 'name': name} in listed
    long = baremetal.json('deploy', 'template', 'list', '--long')
    [mine] = [t for t in long if t['uuid'] == uuid]
    assert mine['steps'] == [BIOS]
    shown = baremetal.json('deploy', 'template', 'show', name,
                           '--fields', 'uuid', 'steps')
    assert set(shown) >= {'uuid', 'steps'} and 'extra' not in shown

    new_name = _name('cli-dt-renamed')
    step = dict(BIOS, priority=20)
    baremetal('deploy', 'template', 'set', uuid, '--name', new_name,
              '--steps', json.dumps([step]), '--extra', 'row=r2')
    shown = baremetal.json('deploy', 'template', 'show', new_name)
    assert (shown['name'], shown['steps'], shown['extra']) == (
        new_name, [step], {'rack': 'r1', 'row': 'r2'})
    baremetal('deploy', 'template', 'unset', uuid, '--extra', 'rack')
    assert baremetal.json('deploy', 'template', 'show', uuid)['extra'] == {
        'row': 'r2'}

    assert 'already exists' in baremetal.fails(
        'deploy', 'template', 'create', new_name, '--steps',
        json.dumps([BIOS]))
    assert 'Invalid trait' in baremetal.fails(
        'deploy', 'template', 'create', 'not-a-trait', '--steps',
        json.dumps([BIOS]))

    baremetal('deploy', 'template', 'delete', new_name)
    assert 'could not be found' in baremetal.fails(
        'deploy', 'template', 'show', uuid)


def test_a_template_step_runs_at_node_deploy(baremetal):
    trait = _name('cli-record')
    message = session.unique('hello')
    baremetal('deploy', 'template', 'create', trait, '--steps', json.dumps([
        {'interface': 'deploy', 'step': 'record_deploy_message',
         'args': {'message': message}, 'priority': 150}]))
    node = baremetal.json('node', 'create', '--driver', DRIVER,
                          '--resource-class', session.unique('cli-dt'))
    uuid = node['uuid']
    baremetal('node', 'add', 'trait', uuid, trait)
    baremetal('node', 'set', uuid, '--instance-info',
              'traits=%s' % json.dumps([trait]))
    baremetal('node', 'manage', uuid, '--wait', WAIT)
    baremetal('node', 'provide', uuid, '--wait', WAIT)
    baremetal('node', 'deploy', uuid, '--wait', WAIT)
    shown = baremetal.json('node', 'show', uuid)
    assert shown['provision_state'] == 'active'
    assert shown['driver_internal_info']['fake_deploy_message'] == message
    baremetal('node', 'undeploy', uuid, '--wait', WAIT)
    baremetal('node', 'delete', uuid)
    baremetal('deploy', 'template', 'delete', trait)
