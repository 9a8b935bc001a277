# SPDX-License-Identifier: Apache-2.0
"""Issue 28 end to end: a real ``ferrum`` under ``auth_strategy =
keystone``, the real Keystone of tests/keystone.py, and the unchanged
clients (``baremetal``, its ``baremetal lease`` plugin, openstacksdk,
metalsmith) authenticating with a user, a password and a scope, as
operators' and tenants' openrc files do.

The clients find ferrum through Keystone's catalog (a ``baremetal``
service and endpoint registered by the system admin for this module, as an
operator registers ferrum), never through ``--os-endpoint``. The lease
engine is ferrum's own, run every second by its conductor; the tests poll
its effects with a deadline.
"""

import datetime
import os
import pathlib
import subprocess
from collections.abc import Iterator
from typing import Any

import openstack
import openstack.config
import pytest
import requests
import yaml
from openstack import exceptions as sdk_exc

from tests.functional import server
from tests.functional.clients import session
from tests.functional.clients.session import BAREMETAL
from tests.functional.clients.session import unique
from tests.keystone import PERSONAS
from tests.keystone import Keystone
from tests.polling import wait_for
from tests.real import require_real

#: Seconds a lease's start or end may take to show: the engine runs every
#: second; generous for a loaded machine.
ENGINE_TIMEOUT = 60.0
#: The CLI's ``--wait``, seconds.
WAIT = '60'
#: Direct requests ask for the newest API version, as the clients negotiate.
VERSION = {'X-OpenStack-Ironic-API-Version': 'latest'}


@pytest.fixture(scope='module')
def ferrum_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """Where the module's ferrum keeps its config, state and output."""
    return tmp_path_factory.mktemp('ferrum-keystone')


@pytest.fixture(scope='module')
def ferrum(keystone: Keystone, ferrum_dir: pathlib.Path) -> Iterator[str]:
    """ferrum under keystone, registered in the catalog as ``baremetal``
    for the module (and taken out of it afterwards)."""
    if not os.access(BAREMETAL, os.X_OK):
        require_real('the baremetal CLI (python-ironicclient)')
    try:
        import ferrum_client  # noqa: F401
    except ImportError:
        require_real('ferrum-client (pip install -e client/)')
    conf = {'DEFAULT': {'auth_strategy': 'keystone',
                        # The service user is nova's, as Ironic's.
                        'rbac_service_role_elevated_access': 'true'},
            'keystone_authtoken': keystone.authtoken_options(),
            # Leases may start now and end now: no guard time, no margin.
            'lease': {'check_interval': '1', 'guard_time': '0',
                      'cleaning_margin': '0'}}
    with server.running_ferrum(ferrum_dir, extra_conf=conf) as url:
        admin = keystone.session('system-admin')
        base = keystone.auth_url
        service = admin.post(base + '/services', json={'service': {
            'type': 'baremetal', 'name': 'ferrum'}}).json()['service']
        for interface in ('public', 'internal', 'admin'):
            admin.post(base + '/endpoints', json={'endpoint': {
                'service_id': service['id'], 'interface': interface,
                'url': url, 'region_id': 'RegionOne'}})
        try:
            yield url
        finally:
            # Deleting the service deletes its endpoints.
            admin.delete(base + '/services/' + service['id'])


class Cli(session.Baremetal):
    """The unchanged ``baremetal`` command as one persona: ``OS_*``
    variables as an openrc sets them, nothing else (no ``clouds.yaml``);
    the endpoint from Keystone's catalog."""

    def __init__(self, keystone: Keystone, persona: str, home: str) -> None:
        super().__init__('', home)
        self.auth = []
        user, project, _role = PERSONAS[persona]
        self.env.update(OS_AUTH_URL=keystone.auth_url,
                        OS_IDENTITY_API_VERSION='3', OS_USERNAME=user,
                        OS_PASSWORD=keystone.password,
                        OS_USER_DOMAIN_NAME='Default',
                        OS_INTERFACE='public')
        if project is None:
            self.env['OS_SYSTEM_SCOPE'] = 'all'
        else:
            self.env.update(OS_PROJECT_NAME=project,
                            OS_PROJECT_DOMAIN_NAME='Default')

    def run(self, *args: str, retries: bool = False
            ) -> subprocess.CompletedProcess[str]:
        # No retries: the CLI retries a 409 five times, 2 s apart.
        return super().run(*args, retries=retries)


def _options(keystone: Keystone, persona: str) -> dict[str, Any]:
    """openstacksdk's options as a user configures them: auth URL, user,
    password and scope; the endpoint from the catalog."""
    user, project, _role = PERSONAS[persona]
    scope = ({'system_scope': 'all'} if project is None else
             {'project_name': project, 'project_domain_name': 'Default'})
    return {'load_yaml_config': False, 'load_envvars': False,
            'auth_type': 'password',
            'auth': {'auth_url': keystone.auth_url, 'username': user,
                     'password': keystone.password,
                     'user_domain_name': 'Default', **scope},
            'interface': 'public', 'baremetal_status_code_retries': 0}


def sdk(keystone: Keystone, persona: str) -> openstack.connection.Connection:
    """An openstacksdk connection as ``persona``."""
    return openstack.connect(**_options(keystone, persona))


def provisioner(keystone: Keystone, persona: str) -> Any:
    """metalsmith's ``Provisioner`` as ``persona``, from a cloud region
    built of the same options (as ``metalsmith --os-auth-url ...`` does)."""
    try:
        import metalsmith
    except ImportError:
        require_real('metalsmith')
    region = openstack.config.get_cloud_region(**_options(keystone, persona))
    return metalsmith.Provisioner(cloud_region=region)


def _at(hours: float) -> str:
    when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(
        hours=hours)
    return when.replace(microsecond=0).isoformat()


def _as_admin(keystone: Keystone, ferrum: str, path: str) -> Any:
    response = keystone.session('system-admin').get(
        ferrum + path, headers=VERSION, raise_exc=False)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_lease_gives_its_project_its_node_until_its_end(keystone, ferrum,
                                                          tmp_path):
    admin = Cli(keystone, 'system-admin', str(tmp_path))
    lessee = Cli(keystone, 'lessee-member', str(tmp_path))
    third = Cli(keystone, 'third-member', str(tmp_path))
    lessee_id = keystone.project_ids['lessee']
    third_id = keystone.project_ids['third']
    rc = unique('e2e')

    # The operator enrolls two nodes and makes them available: the shared
    # pool (no owner).
    nodes = [admin.json('node', 'create', '--driver', 'fake-hardware',
                        '--resource-class', rc, '--name', unique('e2e'))
             ['uuid'] for _ in range(2)]
    admin('node', 'manage', *nodes, '--wait', WAIT)
    admin('node', 'provide', *nodes, '--wait', WAIT)
    assert {n['provision_state'] for n in admin.json(
        'node', 'list', '--resource-class', rc, '--long')} == {'available'}
    # Not the lessee's yet.
    assert lessee.json('node', 'list', '--resource-class', rc) == []

    # The lessee's member books one from the shared pool for its own
    # project (the default) with the plugin, starting now; another
    # project is 403.
    lease = lessee.json('lease', 'create',
                        '--resource-class', rc, '--count', '1',
                        '--end-time', _at(1), '--name', unique('mine'))
    assert lease['project'] == lessee_id
    (node,) = lease['nodes']
    assert 'baremetal:lease:create (HTTP 403)' in lessee.fails(
        'lease', 'create', '--project', third_id, '--resource-class', rc,
        '--end-time', _at(2))
    # A third project's lease (tomorrow): each lists only its own.
    theirs = third.json('lease', 'create', '--project', third_id,
                        '--resource-class', rc, '--start-time', _at(24),
                        '--end-time', _at(25))
    assert [entry['uuid'] for entry in lessee.json('lease', 'list')] == [
        lease['uuid']]
    assert [entry['uuid'] for entry in third.json('lease', 'list')] == [
        theirs['uuid']]
    assert 'could not be found' in lessee.fails('lease', 'show',
                                                theirs['uuid'])

    wait_for(lambda: _as_admin(keystone, ferrum, '/v1/leases/%s'
                               % lease['uuid'])['status'] == 'active',
             ENGINE_TIMEOUT, what='the lease active')

    # The lessee: its node listed, powered, its driver_info its owner's.
    assert [n['uuid'] for n in lessee.json(
        'node', 'list', '--resource-class', rc)] == [node]
    lessee('node', 'power', 'on', node)
    assert lessee.json('node', 'show', node)['power_state'] == 'power on'
    refused = lessee.fails('node', 'set', node, '--driver-info',
                           'ipmi_address=192.0.2.1')
    assert 'HTTP 403' in refused, refused
    redacted = {'content': '** Redacted - requires '
                'baremetal:node:get:driver_info permission. **'}
    assert lessee.json('node', 'show', node, '-c', 'driver_info')[
        'driver_info'] == redacted
    # --long: every field, through a list.
    (listed,) = lessee.json('node', 'list', '--resource-class', rc, '--long')
    assert listed['driver_info'] == redacted
    assert listed['lessee'] == lessee_id
    # A third party: no such node.
    assert 'could not be found' in third.fails('node', 'show', node)
    assert third.json('node', 'list', '--resource-class', rc) == []

    # The same through openstacksdk.
    conn = sdk(keystone, 'lessee-member')
    stranger = sdk(keystone, 'third-member')
    try:
        assert [n.id for n in conn.baremetal.nodes(resource_class=rc)] == [
            node]
        assert conn.baremetal.get_node(node).lessee == lessee_id
        conn.baremetal.set_node_power_state(node, 'power off', wait=True,
                                            timeout=int(WAIT))
        assert conn.baremetal.get_node(node).power_state == 'power off'
        with pytest.raises(sdk_exc.ForbiddenException):
            conn.baremetal.update_node(node, driver_info={'x': 'y'})
        with pytest.raises(sdk_exc.NotFoundException):
            stranger.baremetal.get_node(node)
        assert list(stranger.baremetal.nodes(resource_class=rc)) == []

        # The lease's end (its project ends it now) takes the rights away.
        lessee('lease', 'delete', lease['uuid'])
        wait_for(lambda: _as_admin(keystone, ferrum, '/v1/nodes/%s'
                                   % node)['lessee'] is None,
                 ENGINE_TIMEOUT, what='the lessee cleared at the end')
        assert 'could not be found' in lessee.fails('node', 'show', node)
        assert lessee.json('node', 'list', '--resource-class', rc) == []
        with pytest.raises(sdk_exc.NotFoundException):
            conn.baremetal.get_node(node)
        with pytest.raises(sdk_exc.NotFoundException):
            conn.baremetal.set_node_power_state(node, 'power on')
    finally:
        conn.close()
        stranger.close()
    third('lease', 'delete', theirs['uuid'])


def test_the_plugin_takes_a_clouds_yaml(keystone, ferrum, tmp_path):
    """``--os-cloud``: the plugin authenticates through the CLI's own
    client manager, whatever the source of the options."""
    user, project, _role = PERSONAS['owner-member']
    config = tmp_path / '.config' / 'openstack'
    config.mkdir(parents=True)
    (config / 'clouds.yaml').write_text(yaml.safe_dump({'clouds': {
        # The standalone ``baremetal`` command's default auth type is
        # none, with clouds.yaml too (its own commands alike).
        'ferrum-owner': {'auth_type': 'password', 'auth': {
            'auth_url': keystone.auth_url, 'username': user,
            'password': keystone.password, 'project_name': project,
            'user_domain_name': 'Default',
            'project_domain_name': 'Default'},
            'interface': 'public', 'identity_api_version': 3}}}))
    cli = Cli(keystone, 'owner-member', str(tmp_path))
    cli.env = {key: value for key, value in cli.env.items()
               if not key.startswith('OS_')}
    cli.own_process = True  # the clouds.yaml under its HOME
    owner_id = keystone.project_ids['owner']
    assert cli.json('--os-cloud', 'ferrum-owner', 'lease', 'list') == []
    refused = cli.fails('--os-cloud', 'ferrum-owner', 'lease', 'create',
                        '--project', keystone.project_ids['lessee'],
                        '--end-time', _at(1))
    assert 'baremetal:lease:create (HTTP 403)' in refused, refused
    # Its own project: booked (no node matches an unknown class, which is
    # the API's 400 after the policy allowed it).
    missing = cli.fails('--os-cloud', 'ferrum-owner', 'lease', 'create',
                        '--project', owner_id, '--resource-class',
                        unique('none'), '--end-time', _at(1))
    assert 'Not enough nodes' in missing, missing


def test_keystone_down_is_503_then_recovers_without_a_500(keystone, ferrum,
                                                           ferrum_dir):
    """keystonemiddleware caches the tokens it validated: a cached one
    keeps working while Keystone is down, an unseen one is 503 (not 500),
    and works again once Keystone is back."""
    url = ferrum + '/v1/nodes'
    statuses: list[int] = []

    def get(token: str | None) -> requests.Response:
        headers = dict(VERSION)
        if token is not None:
            headers['X-Auth-Token'] = token
        response = requests.get(url, headers=headers, timeout=60)
        statuses.append(response.status_code)
        return response

    seen = keystone.new_token('owner-reader')
    assert get(seen).status_code == 200
    unseen = keystone.new_token('lessee-member')
    keystone.stop()
    try:
        down = get(unseen)
        assert down.status_code == 503, down.text
        assert 'Traceback' not in down.text
        assert get(seen).status_code == 200
        assert get(None).status_code == 401
        # The public routes do not need Keystone.
        assert requests.get(ferrum + '/v1', timeout=60).status_code == 200
    finally:
        keystone.start()
    wait_for(lambda: get(unseen).status_code == 200, ENGINE_TIMEOUT,
             what='the unseen token accepted once Keystone is back')
    assert 500 not in statuses, statuses
    assert set(statuses) <= {200, 401, 503}, statuses
    # The failed validations are logged without the token or a password.
    log = (ferrum_dir / 'ferrum.out').read_text()
    assert 'Unable to validate token' in log
    for secret in (seen, unseen, keystone.password):
        assert secret not in log


def test_a_service_user_reads_every_node(keystone, ferrum):
    """A service (nova, an inspector) calls with the ``service`` role in
    the ``service`` project: Ironic's ``service_role`` rule, with
    ``rbac_service_role_elevated_access`` set, makes it a system reader
    and member, which needs the token's project name in the policy
    values (oslo.context leaves it out)."""
    admin = keystone.session('system-admin')
    rc = unique('e2e-service')
    created = admin.post(ferrum + '/v1/nodes', headers=VERSION, json={
        'driver': 'fake-hardware', 'resource_class': rc,
        'driver_info': {'ipmi_address': '192.0.2.9'}}, raise_exc=False)
    assert created.status_code == 201, created.text
    node = created.json()['uuid']
    service = keystone.session('service')
    listed = service.get(ferrum + '/v1/nodes?resource_class=%s' % rc,
                         headers=VERSION, raise_exc=False)
    assert listed.status_code == 200, listed.text
    assert [n['uuid'] for n in listed.json()['nodes']] == [node]
    shown = service.get(ferrum + '/v1/nodes/' + node, headers=VERSION,
                        raise_exc=False)
    assert shown.status_code == 200, shown.text
    assert shown.json()['driver_info'] == {'ipmi_address': '192.0.2.9'}
    # A member's change (Ironic's SYSTEM_MEMBER includes the service).
    patched = service.patch(ferrum + '/v1/nodes/' + node, headers=VERSION,
                            json=[{'op': 'add', 'path': '/extra/by',
                                   'value': 'nova'}], raise_exc=False)
    assert patched.status_code == 200, patched.text
    assert admin.delete(ferrum + '/v1/nodes/' + node, headers=VERSION,
                        raise_exc=False).status_code == 204


def test_metalsmith_deploys_a_leased_node_as_the_lessee_admin(keystone,
                                                               ferrum,
                                                               tmp_path):
    """metalsmith as a lessee project's admin (Ironic lets a lessee admin
    provision: ``SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN``): its
    allocation is its project's and lands on the node the project leases,
    never on a free node of the same class beside it; a third project's
    reservation finds nothing."""
    from metalsmith import exceptions as ms_exc
    from metalsmith import sources

    admin = Cli(keystone, 'system-admin', str(tmp_path))
    lessee_id = keystone.project_ids['lessee']
    rc = unique('e2e-ms')
    nodes = [admin.json('node', 'create', '--driver', 'fake-hardware',
                        '--resource-class', rc, '--name', unique('e2e-ms'))
             ['uuid'] for _ in range(2)]
    admin('node', 'manage', *nodes, '--wait', WAIT)
    admin('node', 'provide', *nodes, '--wait', WAIT)
    # The operator books one for the lessee project; the other stays in
    # the shared pool, available, of the same class: the decoy.
    lease = admin.json('lease', 'create', '--project', lessee_id,
                       '--resource-class', rc, '--count', '1',
                       '--end-time', _at(1), '--name', unique('ms-lease'))
    (leased,) = lease['nodes']
    (decoy,) = set(nodes) - {leased}
    wait_for(lambda: _as_admin(keystone, ferrum, '/v1/leases/%s'
                               % lease['uuid'])['status'] == 'active',
             ENGINE_TIMEOUT, what='the lease active')

    lessee = provisioner(keystone, 'lessee-admin')
    third = provisioner(keystone, 'third-admin')
    try:
        # A third project holds nothing of the class: its allocation
        # matches no node (not one it then cannot see), and metalsmith
        # deletes the failed allocation itself.
        with pytest.raises(ms_exc.ReservationFailed) as refused:
            third.reserve_node(rc)
        assert 'No node matches this allocation' in str(refused.value)
        assert '2 with another owner and lessee' in str(refused.value)
        assert list(third.connection.baremetal.allocations(
            resource_class=rc)) == []

        hostname = unique('ms-host')
        node = lessee.reserve_node(rc, hostname=hostname)
        assert node.id == leased
        allocation = lessee.connection.baremetal.get_allocation(hostname)
        assert allocation.owner == lessee_id
        assert allocation.state == 'active'
        assert allocation.node_id == leased
        assert _as_admin(keystone, ferrum, '/v1/nodes/%s'
                         % decoy)['allocation_uuid'] is None

        image = sources.HttpWholeDiskImage(
            'http://127.0.0.1:9/image.qcow2',
            checksum='0123456789abcdef0123456789abcdef')
        lessee.provision_node(node, image, hostname=hostname,
                              wait=ENGINE_TIMEOUT)
        instance = lessee.show_instance(hostname)
        assert instance.uuid == leased
        assert instance.state.name == 'ACTIVE'
        assert instance.allocation.owner == lessee_id
        # Still nothing for the third project, the instance included.
        with pytest.raises(ms_exc.InstanceNotFound):
            third.show_instance(hostname)

        lessee.unprovision_node(node, wait=ENGINE_TIMEOUT)
        # Tear-down deleted the allocation; the node is the project's
        # again until the lease ends.
        assert list(lessee.connection.baremetal.allocations(
            resource_class=rc)) == []
        shown = _as_admin(keystone, ferrum, '/v1/nodes/%s' % leased)
        assert shown['provision_state'] == 'available'
        assert shown['lessee'] == lessee_id
        assert _as_admin(keystone, ferrum, '/v1/nodes/%s'
                         % decoy)['provision_state'] == 'available'
    finally:
        lessee.connection.close()
        third.connection.close()
    admin('lease', 'delete', lease['uuid'])
