# SPDX-License-Identifier: Apache-2.0
"""Scripts and fixtures written for Ironic, run unchanged against ferrum.

The journeys that used to fail: create at 1.10 (available) and delete;
create, manage, provide, delete; retire with a reason and back; VIFs on a
``noop`` network interface; and metalsmith's own command line deploying,
listing, showing and undeploying an instance.
"""

import json
import os
import subprocess
import sys
import uuid as uuid_mod
from typing import Any

import pytest
from openstack import exceptions as sdk_exc

from tests.functional.clients import session
from tests.functional.clients.session import DRIVER
from tests.functional.clients.session import WAIT
from tests.real import require_real

METALSMITH = os.path.join(os.path.dirname(sys.executable), 'metalsmith')


def test_cli_creates_available_at_1_10_and_deletes(baremetal):
    node = baremetal.json('--os-baremetal-api-version', '1.10', 'node',
                          'create', '--driver', DRIVER)
    assert node['provision_state'] == 'available'
    assert node['power_state'] is None
    baremetal('node', 'delete', node['uuid'])
    assert 'could not be found' in baremetal.fails('node', 'show',
                                                   node['uuid'])


def test_cli_create_manage_provide_delete(baremetal):
    name = session.unique('compat')
    node = baremetal.json('node', 'create', '--driver', DRIVER, '--name', name)
    port = baremetal.json('port', 'create', session.unique_mac(), '--node',
                    node['uuid'])
    baremetal('node', 'manage', name, '--wait', WAIT)
    baremetal('node', 'provide', name, '--wait', WAIT)
    assert baremetal.node(node['uuid'])['provision_state'] == 'available'
    # No retries: a 409 here would fail at once instead of after six.
    result = baremetal.run('node', 'delete', name, retries=False)
    assert result.returncode == 0, result.stderr
    assert 'could not be found' in baremetal.fails('node', 'show', name)
    assert 'could not be found' in baremetal.fails('port', 'show',
                                                   port['uuid'])


def test_cli_retires_and_unretires(baremetal):
    node = baremetal.json('node', 'create', '--driver', DRIVER)
    baremetal('node', 'set', node['uuid'], '--retired', '--retired-reason',
        'end of life')
    shown = baremetal.node(node['uuid'])
    assert shown['retired'] is True
    assert shown['retired_reason'] == 'end of life'
    baremetal('node', 'unset', node['uuid'], '--retired')
    shown = baremetal.node(node['uuid'])
    assert shown['retired'] is False and shown['retired_reason'] is None
    # A reason without the flag is refused, as by Ironic.
    error = baremetal.fails('node', 'set', node['uuid'], '--retired-reason',
                            'x')
    assert 'retired' in error


def test_sdk_create_manage_provide_delete(conn):
    node = conn.baremetal.create_node(driver=DRIVER,
                                      name=session.unique('sdk-compat'))
    node = conn.baremetal.set_node_provision_state(node, 'manage', wait=True)
    node = conn.baremetal.set_node_provision_state(node, 'provide',
                                                   wait=True)
    assert node.provision_state == 'available'
    conn.baremetal.delete_node(node)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.get_node(node.id)


def test_sdk_retired_reason_goes_with_retired(conn):
    node = conn.baremetal.create_node(driver=DRIVER)
    node = conn.baremetal.update_node(node, is_retired=True,
                                      retired_reason='decommissioned')
    assert node.is_retired and node.retired_reason == 'decommissioned'
    node = conn.baremetal.update_node(node, is_retired=False)
    assert not node.is_retired and node.retired_reason is None
    conn.baremetal.delete_node(node)


# ---- metalsmith's command line --------------------------------------------

class Metalsmith:
    def __init__(self, url: str, home: str) -> None:
        self.url = url
        self.env = {key: value for key, value in os.environ.items()
                    if not key.startswith('OS_')}
        self.env['HOME'] = home

    def __call__(self, *args: str) -> Any:
        result = subprocess.run(
            [METALSMITH, '--os-auth-type', 'none', '--os-endpoint',
             self.url, '-f', 'json', *args], check=False, env=self.env,
            capture_output=True, text=True, timeout=180,
            stdin=subprocess.DEVNULL)
        assert result.returncode == 0, (
            'metalsmith %s exited with %d:\n%s%s' % (
                ' '.join(args), result.returncode, result.stdout,
                result.stderr))
        assert 'Traceback' not in result.stderr, result.stderr
        return json.loads(result.stdout) if result.stdout.strip() else None


@pytest.fixture(scope='module')
def metalsmith(ferrum_sqlite_url: str,
               tmp_path_factory: pytest.TempPathFactory) -> Metalsmith:
    if not os.access(METALSMITH, os.X_OK):
        require_real("metalsmith's command line")
    return Metalsmith(ferrum_sqlite_url,
                      str(tmp_path_factory.mktemp('metalsmith-home')))


def test_metalsmith_deploy_list_show_undeploy(baremetal, metalsmith):
    rc = session.unique('ms-cli')
    name = session.unique('ms-cli-node')
    node = baremetal.json('node', 'create', '--driver', DRIVER, '--name', name,
                    '--resource-class', rc)
    baremetal('node', 'manage', name, '--wait', WAIT)
    baremetal('node', 'provide', name, '--wait', WAIT)
    hostname = session.unique('ms-cli-host')
    deployed = metalsmith(
        'deploy', '--resource-class', rc, '--hostname', hostname,
        '--image', 'http://127.0.0.1:9/image.qcow2',
        '--image-checksum', '0123456789abcdef0123456789abcdef',
        '--wait', WAIT)
    assert deployed['uuid'] == node['uuid']
    assert deployed['state'] == 'active'
    assert deployed['hostname'] == hostname
    assert deployed['allocation']['name'] == hostname

    listed = metalsmith('list')
    assert listed[hostname]['uuid'] == node['uuid']
    shown = metalsmith('show', hostname)
    assert shown[hostname]['state'] == 'active'
    assert shown[hostname]['node']['provision_state'] == 'active'

    metalsmith('undeploy', hostname, '--wait', WAIT)
    after = baremetal.node(node['uuid'])
    assert after['provision_state'] == 'available'
    assert after['allocation_uuid'] is None
    assert hostname not in (metalsmith('list') or {})


# ---- VIFs through the noop network interface --------------------------------

def test_cli_vifs_on_a_noop_node(baremetal):
    node = baremetal.json('node', 'create', '--driver', DRIVER,
                          '--network-interface', 'noop')
    assert node['network_interface'] == 'noop'
    vif = str(uuid_mod.uuid4())
    baremetal('node', 'vif', 'attach', node['uuid'], vif)
    listed = baremetal.json('node', 'vif', 'list', node['uuid'])
    assert [entry['id'] for entry in listed] == [vif]
    baremetal('node', 'vif', 'detach', node['uuid'], vif)
    assert baremetal.json('node', 'vif', 'list', node['uuid']) == []
    missing = str(uuid_mod.uuid4())
    for args in (('list', missing), ('attach', missing, vif),
                 ('detach', missing, vif)):
        assert 'could not be found' in baremetal.fails('node', 'vif', *args)


def test_sdk_vifs_on_a_noop_node(conn):
    node = conn.baremetal.create_node(driver=DRIVER,
                                      network_interface='noop')
    assert node.network_interface == 'noop'
    vif = str(uuid_mod.uuid4())
    conn.baremetal.attach_vif_to_node(node, vif)
    assert conn.baremetal.list_node_vifs(node) == [vif]
    assert conn.baremetal.detach_vif_from_node(node, vif) is True
    assert conn.baremetal.list_node_vifs(node) == []
    missing = str(uuid_mod.uuid4())
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.list_node_vifs(missing)
    with pytest.raises(sdk_exc.NotFoundException):
        conn.baremetal.attach_vif_to_node(missing, vif)
