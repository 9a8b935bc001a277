# SPDX-License-Identifier: Apache-2.0
"""The real ``baremetal`` CLI on chassis and on volume connectors and
targets, against a real ferrum (the fixture of test_baremetal_cli.py)."""

from tests.functional.clients import session
from tests.functional.clients.session import DRIVER
from tests.functional.clients.session import WAIT


def test_chassis_create_list_show_set_delete(baremetal):
    chassis = baremetal.json('chassis', 'create', '--description', 'rack 7',
                             '--extra', 'row=b')
    assert chassis['description'] == 'rack 7'
    assert chassis['extra'] == {'row': 'b'}
    listed = baremetal.json('chassis', 'list')
    assert chassis['uuid'] in [c['uuid'] for c in listed]
    baremetal('chassis', 'set', chassis['uuid'], '--extra', 'answer=42',
              '--description', 'rack 8')
    shown = baremetal.json('chassis', 'show', chassis['uuid'])
    assert shown['extra'] == {'row': 'b', 'answer': 42}
    assert shown['description'] == 'rack 8'
    node = baremetal.json('node', 'create', '--driver', DRIVER,
                          '--chassis-uuid', chassis['uuid'])
    assert node['chassis_uuid'] == chassis['uuid']
    nodes = baremetal.json('node', 'list', '--chassis', chassis['uuid'])
    assert [n['uuid'] for n in nodes] == [node['uuid']]
    error = baremetal.fails('chassis', 'delete', chassis['uuid'])
    assert 'contains nodes' in error
    baremetal('node', 'delete', node['uuid'])
    baremetal('chassis', 'delete', chassis['uuid'])
    assert 'could not be found' in baremetal.fails('chassis', 'show',
                                                   chassis['uuid'])


def test_volume_connector_and_target(baremetal):
    node = baremetal.json('node', 'create', '--driver', DRIVER, '--name',
                          session.unique('cli-volume'))
    baremetal('node', 'manage', node['uuid'], '--wait', WAIT)
    baremetal('node', 'power', 'off', node['uuid'], '--power-timeout', WAIT)
    iqn = session.unique('iqn.2017-07.org.openstack')
    connector = baremetal.json('volume', 'connector', 'create', '--node',
                               node['uuid'], '--type', 'iqn',
                               '--connector-id', iqn)
    assert connector['node_uuid'] == node['uuid']
    listed = baremetal.json('volume', 'connector', 'list', '--node',
                            node['uuid'])
    assert [c['uuid'] for c in listed] == [connector['uuid']]
    baremetal('volume', 'connector', 'set', connector['uuid'], '--extra',
              'answer=42')
    shown = baremetal.json('volume', 'connector', 'show', connector['uuid'])
    assert shown['extra'] == {'answer': 42}
    assert shown['connector_id'] == iqn
    target = baremetal.json('volume', 'target', 'create', '--node',
                            node['uuid'], '--type', 'iscsi',
                            '--boot-index', '0', '--volume-id',
                            '04452bed-5367-4202-8bf5-de4335ac56d2',
                            '--property', 'auth_password=secret')
    assert target['properties'] == {'auth_password': '******'}
    error = baremetal.fails('volume', 'target', 'create', '--node',
                            node['uuid'], '--type', 'iscsi',
                            '--boot-index', '0', '--volume-id', 'other')
    assert 'boot index' in error
    listed = baremetal.json('volume', 'target', 'list', '--node',
                            node['uuid'])
    assert [t['uuid'] for t in listed] == [target['uuid']]
    baremetal('volume', 'target', 'set', target['uuid'], '--boot-index',
              '1')
    shown = baremetal.json('volume', 'target', 'show', target['uuid'])
    assert shown['boot_index'] == 1
    baremetal('volume', 'connector', 'delete', connector['uuid'])
    baremetal('volume', 'target', 'delete', target['uuid'])
    assert 'could not be found' in baremetal.fails(
        'volume', 'target', 'show', target['uuid'])
    # Booting from a volume is not served: the CLI shows why.
    error = baremetal.fails('node', 'set', node['uuid'],
                            '--storage-interface', 'cinder')
    assert 'does not boot nodes from volumes' in error
