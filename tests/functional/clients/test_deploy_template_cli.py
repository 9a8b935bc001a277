# SPDX-License-Identifier: Apache-2.0
"""``baremetal deploy template ...`` (python-ironicclient) against a real
ferrum."""

import json

from tests.functional.clients import session

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
