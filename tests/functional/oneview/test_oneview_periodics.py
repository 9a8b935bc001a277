# SPDX-License-Identifier: Apache-2.0
"""The three dynamic-allocation periodic tasks, called directly with the
conductor's context, against the OneView simulator: taken, freed, the
deploy-versus-OneView race, their cost in requests, and their robustness.
"""

from ferrum.conductor import service
from ferrum.conductor import task_manager
from ferrum.periodic import worker
from tests.functional.oneview.driver import act
from tests.functional.oneview.driver import allocation
from tests.functional.oneview.driver import deploy
from tests.functional.oneview.driver import enroll
from tests.functional.oneview.driver import get
from tests.functional.oneview.driver import profiles
from tests.functional.oneview.driver import quiet
from tests.functional.oneview.driver import run_cleanfail
from tests.functional.oneview.driver import run_freed
from tests.functional.oneview.driver import run_taken

REASON = 'node in use by OneView'


def _available(conductor, db, sim, index=0):
    node = act(conductor, db, enroll(conductor, sim, index), 'manage')
    node = act(conductor, db, node, 'provide')
    assert node.provision_state == 'available', node.last_error
    return node


def _list_calls(sim):
    counts = sim.request_counts()['requests']
    return (counts.get('GET /rest/server-hardware', 0),
            sum(v for k, v in counts.items()
                if k.startswith('GET /rest/server-hardware/')))


def test_taken_while_available_then_freed_goes_through_cleaning(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    other = _available(ov_conductor, db, sim, 1)
    hw_uri = node.driver_info['server_hardware_uri']
    assert run_taken(ov_conductor) == 0

    sim.take(hw_uri)
    assert run_taken(ov_conductor) == 1
    node = get(db, node)
    assert (node.provision_state, node.maintenance,
            node.maintenance_reason) == ('manageable', True, REASON)
    assert node.driver_internal_info[allocation.IN_USE_FLAG] is True
    assert get(db, other).provision_state == 'available'
    # Still taken: the freed task leaves it, and so does a second run.
    assert run_freed(ov_conductor) == 0
    assert run_taken(ov_conductor) == 0
    assert get(db, node).maintenance

    sim.free(hw_uri)
    creates = len([t for t in sim.state()['tasks']
                   if t.get('name') == 'Create'])
    assert run_freed(ov_conductor) == 1
    node = quiet(db, node)
    assert (node.provision_state, node.maintenance, node.maintenance_reason,
            node.last_error) == ('available', False, None, None)
    assert allocation.IN_USE_FLAG not in node.driver_internal_info
    # It was cleaned (a temporary profile came and went) before reuse.
    assert len([t for t in sim.state()['tasks']
                if t.get('name') == 'Create']) == creates + 1
    assert profiles(sim) == []


def test_freed_leaves_nodes_an_operator_put_in_maintenance(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = act(ov_conductor, db, enroll(ov_conductor, sim), 'manage')
    ov_conductor.manager.set_maintenance(node.uuid, True, REASON)
    assert run_freed(ov_conductor) == 0   # the reason alone is not enough
    node = get(db, node)
    assert (node.provision_state, node.maintenance) == ('manageable', True)


def test_the_race_deploy_failed_clean_failed_then_rescued(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = _available(ov_conductor, db, sim)
    hw_uri = node.driver_info['server_hardware_uri']
    sim.take(hw_uri)   # before the taken task noticed
    theirs = sim.hardware(hw_uri)['serverProfileUri']

    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'deploy failed'
    assert 'in use by OneView' in node.last_error
    node = act(ov_conductor, db, node, 'deleted')
    assert node.provision_state == 'clean failed'
    assert 'in use by OneView' in node.last_error
    assert node.driver_internal_info[allocation.ALLOCATION_ERROR] == (
        allocation.ALLOCATION_ERROR_VALUE)

    assert run_cleanfail(ov_conductor) == 1
    node = get(db, node)
    assert (node.provision_state, node.maintenance,
            node.maintenance_reason, node.fault) == (
        'manageable', True, REASON, None)
    assert allocation.ALLOCATION_ERROR not in node.driver_internal_info
    assert run_cleanfail(ov_conductor) == 0
    assert run_freed(ov_conductor) == 0   # OneView still has it
    # Nothing ferrum did touched the OneView user's profile or power.
    assert [p['uri'] for p in profiles(sim)] == [theirs]

    sim.free(hw_uri)
    assert run_freed(ov_conductor) == 1
    node = quiet(db, node)
    assert (node.provision_state, node.maintenance, node.last_error) == (
        'available', False, None)
    node = act(ov_conductor, db, node, 'deploy')
    assert node.provision_state == 'active'


def test_a_clean_failure_of_another_kind_is_left_to_the_operator(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    node = act(ov_conductor, db, enroll(ov_conductor, sim), 'manage')
    sim.fault('task_error', match='Create', count=1, message='no')
    node = act(ov_conductor, db, node, 'provide')
    assert node.provision_state == 'clean failed'
    assert run_cleanfail(ov_conductor) == 0
    assert get(db, node).provision_state == 'clean failed'


def test_one_listing_per_page_whatever_the_number_of_nodes(
        ov_conductor, db, oneview_simulator, conf):
    sim = oneview_simulator
    sim.reset(hardware=7)
    nodes = [enroll(ov_conductor, sim, i) for i in range(7)]
    for node in nodes:
        node = act(ov_conductor, db, node, 'manage')
    conf.set_override('automated_clean', False, 'conductor')
    for node in nodes:
        act(ov_conductor, db, node, 'provide')
    conf.set_override('page_size', 3, 'oneview')
    sim.take(nodes[4].driver_info['server_hardware_uri'])
    sim.reset_request_counts()
    assert run_taken(ov_conductor) == 1
    assert _list_calls(sim) == (3, 0)    # ceil(7 / 3) pages, no per-node GET
    sim.reset_request_counts()
    assert run_cleanfail(ov_conductor) == 0
    assert run_freed(ov_conductor) == 0
    assert _list_calls(sim) == (3, 0)    # only "freed" had candidates


def test_no_candidates_means_no_request(ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    act(ov_conductor, db, enroll(ov_conductor, sim), 'manage')
    sim.reset_request_counts()
    assert (run_taken(ov_conductor), run_freed(ov_conductor),
            run_cleanfail(ov_conductor)) == (0, 0, 0)
    assert sim.request_counts()['total'] == 0


def test_an_outage_or_a_bad_node_never_ends_a_run(
        ov_conductor, db, oneview_simulator):
    sim = oneview_simulator
    first = _available(ov_conductor, db, sim, 0)
    second = _available(ov_conductor, db, sim, 1)
    third = _available(ov_conductor, db, sim, 2)
    # A node whose hardware OneView does not know, one locked by a running
    # operation, and one whose driver_info is broken, before a taken one.
    ghost = get(db, first)
    ghost.driver_info = dict(ghost.driver_info, server_hardware_uri=(
        '/rest/server-hardware/gone'))
    ghost.save()
    broken = get(db, second)
    broken.driver_info = {'server_hardware_uri': None}
    broken.save()
    sim.take(third.driver_info['server_hardware_uri'])

    sim.fault('appliance_down')
    assert run_taken(ov_conductor) == 0   # logged, nothing changed
    assert {get(db, n).provision_state for n in (first, second, third)} == {
        'available'}
    sim.clear_faults()

    with task_manager.acquire(ov_conductor.ctx, third.id, purpose='test'):
        assert run_taken(ov_conductor) == 0   # locked: skipped, not waited
    assert run_taken(ov_conductor) == 1
    assert get(db, third).provision_state == 'manageable'
    assert get(db, first).provision_state == 'available'
    assert get(db, second).provision_state == 'available'


def test_interval_and_switch_decide_whether_the_tasks_run(
        ov_conductor, conf):
    names = {'periodic_check_nodes_taken_by_oneview',
             'periodic_check_nodes_freed_by_oneview',
             'periodic_check_nodes_taken_on_cleanfail'}

    def scheduled():
        built = worker.build_worker(ov_conductor.ctx,
                                    ov_conductor.periodic_objects())
        return {watcher.work.callback.__name__.split('.')[-1]
                for watcher in built.iter_watchers()} & names

    found = {name for _obj, name, _spec in worker.collect(
        [deploy.OneViewDeploy()])}
    assert names <= found
    assert scheduled() == names
    conf.set_override('periodic_check_interval', 0, 'oneview')
    assert scheduled() == set()
    conf.set_override('periodic_check_interval', 300, 'oneview')
    conf.set_override('enable_periodic_tasks', False, 'oneview')
    assert scheduled() == set()
    assert isinstance(ov_conductor, service.ConductorService)


def test_taken_knows_a_profile_named_for_its_node_from_a_users(
        ov_conductor, db, oneview_simulator):
    """An available node whose apply was interrupted (the announcement
    left behind, its profile on the hardware, unrecorded) is not taken
    for OneView's: the name says whose it is. Only that node costs a
    request beyond the listing."""
    sim = oneview_simulator
    ours = _available(ov_conductor, db, sim)
    theirs = _available(ov_conductor, db, sim, 1)
    hw_uri = ours.driver_info['server_hardware_uri']
    with task_manager.acquire(ov_conductor.ctx, ours.id,
                              purpose='test: an apply the crash cut') as task:
        name = allocation.cleaning_profile_name(task)
        task.node.driver_internal_info = dict(
            task.node.driver_internal_info, oneview_applying=name)
        profile = allocation.client_for(task).create_profile(
            sim.template_uri, hw_uri, name)
    sim.take(theirs.driver_info['server_hardware_uri'])
    sim.reset_request_counts()
    assert run_taken(ov_conductor) == 1
    counts = sim.request_counts()['requests']
    assert counts == {'GET /rest/server-hardware': 1,
                      'GET /rest/server-profiles/{id}': 1}
    ours, theirs = get(db, ours), get(db, theirs)
    assert (ours.provision_state, ours.maintenance) == ('available', False)
    assert ours.driver_info['applied_server_profile_uri'] == profile
    assert 'oneview_applying' not in ours.driver_internal_info
    assert (theirs.provision_state, theirs.maintenance_reason) == (
        'manageable', REASON)
    # ... and it is removed as ferrum's when the node is next cleaned.
    ours = act(ov_conductor, db, ours, 'manage')
    ours = act(ov_conductor, db, ours, 'provide')
    assert (ours.provision_state, ours.last_error) == ('available', None)
    assert sim.hardware(hw_uri)['serverProfileUri'] is None
