# SPDX-License-Identifier: Apache-2.0
"""Allocations with the real clients, unchanged, against a real ferrum.

openstacksdk (its allocation proxy and ``wait_for_allocation``), the
``baremetal allocation`` commands of python-ironicclient with ``--wait``,
and metalsmith's ``Provisioner``: reserve, provision, unprovision, and the
clean-up it does itself when a reservation fails.
"""

from typing import Any

import pytest
from openstack import exceptions as sdk_exc

from tests.functional.clients import session
from tests.functional.clients.session import DRIVER
from tests.functional.clients.session import WAIT
from tests.functional.clients.session import Baremetal
from tests.real import require_real


def _available(conn: Any, resource_class: str, traits: list[str],
               name: str | None = None) -> Any:
    node = conn.baremetal.create_node(driver=DRIVER, name=name,
                                      resource_class=resource_class)
    if traits:
        conn.baremetal.set_node_traits(node, traits)
    conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                            timeout=session.WAIT_TIMEOUT)
    return conn.baremetal.set_node_provision_state(
        node, 'provide', wait=True, timeout=session.WAIT_TIMEOUT)


# ---- openstacksdk --------------------------------------------------------

def test_openstacksdk_allocates_lists_updates_and_frees(conn):
    rc = session.unique('sdk-alloc')
    gpu = _available(conn, rc, ['CUSTOM_GPU'])
    plain = _available(conn, rc, [])
    allocation = conn.baremetal.create_allocation(
        resource_class=rc, traits=['CUSTOM_GPU'],
        name=session.unique('sdk-a'), extra={'owner-team': 'web'})
    allocation = conn.baremetal.wait_for_allocation(allocation, timeout=60)
    assert allocation.state == 'active'
    assert allocation.node_id == gpu.id
    node = conn.baremetal.get_node(gpu.id)
    assert node.allocation_id == allocation.id
    assert node.instance_id == allocation.id

    listed = list(conn.baremetal.allocations(resource_class=rc))
    assert [a.id for a in listed] == [allocation.id]
    assert conn.baremetal.get_allocation(allocation.name).id == allocation.id
    renamed = conn.baremetal.update_allocation(
        allocation, name=session.unique('sdk-b'), extra={'x': 'y'})
    assert renamed.extra == {'x': 'y'}

    by_candidate = conn.baremetal.wait_for_allocation(
        conn.baremetal.create_allocation(resource_class=rc,
                                         candidate_nodes=[plain.name
                                                          or plain.id]),
        timeout=60)
    assert by_candidate.node_id == plain.id
    assert by_candidate.candidate_nodes == [plain.id]

    failed = conn.baremetal.create_allocation(resource_class=rc)
    with pytest.raises(sdk_exc.ResourceFailure) as caught:
        conn.baremetal.wait_for_allocation(failed, timeout=60)
    assert 'already allocated' in str(caught.value)

    for item in (allocation, by_candidate, failed):
        conn.baremetal.delete_allocation(item)
    assert list(conn.baremetal.allocations(resource_class=rc)) == []
    assert conn.baremetal.get_node(gpu.id).allocation_id is None


def test_openstacksdk_sees_conflicts_and_missing_nodes(strict):
    rc = session.unique('sdk-alloc-err')
    with pytest.raises(sdk_exc.BadRequestException) as caught:
        strict.baremetal.create_allocation(resource_class=rc,
                                           candidate_nodes=['no-such-node'])
    assert 'no-such-node' in str(caught.value)
    name = session.unique('dup')
    first = strict.baremetal.create_allocation(resource_class=rc, name=name)
    with pytest.raises(sdk_exc.ConflictException):
        strict.baremetal.create_allocation(resource_class=rc, name=name)
    strict.baremetal.delete_allocation(first)
    with pytest.raises(sdk_exc.NotFoundException):
        strict.baremetal.get_allocation(first.id)


# ---- baremetal CLI ---------------------------------------------------------

@pytest.fixture
def sdk_conn(ferrum_sqlite_url: str) -> Any:
    connection = session.connect(ferrum_sqlite_url)
    yield connection
    connection.close()


def test_baremetal_allocation_create_wait_and_delete(baremetal, sdk_conn):
    rc = session.unique('cli-alloc')
    node = _available(sdk_conn, rc, ['CUSTOM_CLI'])
    name = session.unique('cli-a')
    created = baremetal.json(
        'allocation', 'create', '--resource-class', rc, '--trait',
        'CUSTOM_CLI', '--name', name, '--wait', WAIT)
    assert created['state'] == 'active'
    assert created['node_uuid'] == node.id
    shown = baremetal.json('allocation', 'show', name)
    assert shown['uuid'] == created['uuid']
    listed = baremetal.json('allocation', 'list', '--resource-class', rc)
    assert [a['uuid'] for a in listed] == [created['uuid']]
    assert baremetal.node(node.id)['allocation_uuid'] == created['uuid']

    failed = baremetal.fails('allocation', 'create', '--resource-class', rc,
                             '--wait', WAIT)
    assert 'already allocated' in failed

    baremetal('allocation', 'delete', name)
    assert baremetal.node(node.id)['allocation_uuid'] is None
    assert 'could not be found' in baremetal.fails('allocation', 'show',
                                                   name)
    errored = baremetal.json('allocation', 'list', '--resource-class', rc,
                             '--state', 'error')
    for allocation in errored:
        baremetal('allocation', 'delete', allocation['uuid'])


@pytest.fixture
def baremetal(ferrum_sqlite_url, tmp_path_factory):
    return Baremetal(ferrum_sqlite_url,
                         str(tmp_path_factory.mktemp('cli-alloc-home')))


# ---- metalsmith -------------------------------------------------------------

@pytest.fixture
def provisioner(sdk_conn: Any) -> Any:
    try:
        import metalsmith
    except ImportError:
        require_real('metalsmith')
    return metalsmith.Provisioner(cloud_region=sdk_conn.config)


def test_metalsmith_reserves_provisions_and_unprovisions(provisioner,
                                                         sdk_conn):
    from metalsmith import exceptions as ms_exc
    from metalsmith import sources

    rc = session.unique('ms')
    wanted = _available(sdk_conn, rc, ['CUSTOM_MS'],
                        name=session.unique('ms-node'))
    _available(sdk_conn, rc, [])
    hostname = session.unique('ms-host')
    node = provisioner.reserve_node(rc, traits=['CUSTOM_MS'],
                                    hostname=hostname)
    assert node.id == wanted.id and node.allocation_id
    allocation = sdk_conn.baremetal.get_allocation(node.allocation_id)
    assert allocation.name == hostname
    assert allocation.state == 'active'

    # A reservation that cannot succeed: metalsmith deletes the failed
    # allocation itself, so nothing is left behind.
    with pytest.raises(ms_exc.ReservationFailed):
        provisioner.reserve_node(rc, traits=['CUSTOM_MISSING'])
    assert [a.name for a in sdk_conn.baremetal.allocations(
        resource_class=rc)] == [hostname]

    image = sources.HttpWholeDiskImage(
        'http://127.0.0.1:9/image.qcow2',
        checksum='0123456789abcdef0123456789abcdef')
    provisioner.provision_node(node, image, hostname=hostname,
                               wait=session.WAIT_TIMEOUT)
    instance = provisioner.show_instance(hostname)
    assert instance.uuid == wanted.id
    assert instance.state.name == 'ACTIVE'
    provisioner.unprovision_node(node, wait=session.WAIT_TIMEOUT)
    # Tear-down deleted the allocation.
    assert list(sdk_conn.baremetal.allocations(resource_class=rc)) == []
    assert sdk_conn.baremetal.get_node(node.id).provision_state == (
        'available')


def test_metalsmith_reserves_among_candidates(provisioner, sdk_conn):
    rc = session.unique('ms-cand')
    first = _available(sdk_conn, rc, [], name=session.unique('ms-c1'))
    second = _available(sdk_conn, rc, [], name=session.unique('ms-c2'))
    node = provisioner.reserve_node(rc, candidates=[second.name])
    assert node.id == second.id
    allocation = sdk_conn.baremetal.get_allocation(node.allocation_id)
    assert allocation.candidate_nodes == [second.id]
    sdk_conn.baremetal.delete_allocation(allocation)
    assert sdk_conn.baremetal.get_node(first.id).allocation_id is None
