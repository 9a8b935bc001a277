# SPDX-License-Identifier: Apache-2.0
"""drivers/base.py's promises, proved with a driver that records its calls.

Each test drives the real conductor through one path and compares the
hooks the recording driver saw (tests/thirdparty_driver's
``acme_ferrum.recording``) with what the contract documents.
"""

import dataclasses
import datetime

import pytest

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import service
from ferrum.conductor import timeouts
from ferrum.objects import agent_token
from ferrum.objects import node as node_obj
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state
from tests.real import require_real

try:
    from acme_ferrum import recording
except ImportError:  # pragma: no cover - make test installs it
    recording = None


@pytest.fixture
def conductor(conf, db):
    if recording is None:
        require_real('the example driver package (acme-ferrum)')
    conf.set_override('enabled_hardware_types',
                      ['fake-hardware', 'recording-hardware'])
    for kind in ('power', 'deploy', 'boot', 'inspect'):
        enabled = list(conf['enabled_%s_interfaces' % kind])
        conf.set_override('enabled_%s_interfaces' % kind,
                          enabled + ['fake', 'recording'])
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    yield svc
    svc.stop()


def _node(conductor, db, state, **driver_info):
    node = conductor.manager.create_node({
        'driver': 'recording-hardware', 'driver_info': driver_info})
    return to_state(conductor.manager, db, node, state)


def _since(node, mark):
    return recording.calls(node.uuid)[mark:]


def test_deploy_validates_then_prepares_then_deploys(conductor, db):
    node = _node(conductor, db, 'available')
    mark = len(recording.calls(node.uuid))
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    settled(db, node.id, states.ACTIVE)
    assert _since(node, mark) == [
        'power.validate', 'deploy.validate', 'boot.validate',
        'deploy.prepare', 'deploy.deploy']


@pytest.mark.parametrize('hook', ['prepare', 'deploy'])
def test_failed_deploy_is_cleaned_up(conductor, db, hook):
    node = _node(conductor, db, 'available', fake_fail=[hook])
    mark = len(recording.calls(node.uuid))
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    node = settled(db, node.id, states.DEPLOYFAIL)
    assert _since(node, mark)[-1] == 'deploy.clean_up'
    assert 'fake %s failure' % hook in node.last_error


def test_timed_out_deploy_is_cleaned_up(conductor, db, conf):
    conf.set_override('deploy_callback_timeout', 60, 'conductor')
    node = _node(conductor, db, 'available', fake_async=['deploy'])
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    settled(db, node.id, states.DEPLOYWAIT)
    later = datetime.datetime.utcnow() + datetime.timedelta(seconds=61)
    timeouts.ProvisionTimeouts().check_timeouts(
        dataclasses.replace(conductor.ctx, clock=lambda: later))
    node = settled(db, node.id, states.DEPLOYFAIL)
    assert recording.calls(node.uuid)[-1] == 'deploy.clean_up'
    assert 'deploy_callback_timeout' in node.last_error


def test_aborted_deploy_is_cleaned_up(conductor, db):
    node = _node(conductor, db, 'available', fake_async=['deploy'])
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    settled(db, node.id, states.DEPLOYWAIT)
    conductor.manager.do_provisioning_action(node.uuid, 'abort')
    node = settled(db, node.id, states.DEPLOYFAIL)
    assert recording.calls(node.uuid)[-1] == 'deploy.clean_up'


def test_clean_up_failing_too_is_added_to_last_error(conductor, db):
    node = _node(conductor, db, 'available', fake_fail=['deploy',
                                                        'clean_up'])
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    node = settled(db, node.id, states.DEPLOYFAIL)
    assert 'fake deploy failure' in node.last_error
    assert 'cleaning up also failed' in node.last_error


def test_undeploy_tears_down_cleans_up_then_cleans(conductor, db):
    node = _node(conductor, db, 'active')
    mark = len(recording.calls(node.uuid))
    conductor.manager.do_provisioning_action(node.uuid, 'deleted')
    settled(db, node.id, states.AVAILABLE)
    assert _since(node, mark) == [
        'deploy.tear_down', 'deploy.clean_up', 'power.validate',
        'deploy.validate', 'deploy.prepare_cleaning',
        'deploy.execute_clean_step', 'deploy.tear_down_cleaning']


def test_failed_clean_step_still_tears_down_cleaning(conductor, db):
    node = _node(conductor, db, 'manageable', fake_fail=['erase_devices'])
    conductor.manager.do_provisioning_action(node.uuid, 'provide')
    node = settled(db, node.id, states.CLEANFAIL)
    assert recording.calls(node.uuid)[-2:] == [
        'deploy.execute_clean_step', 'deploy.tear_down_cleaning']


def test_take_over_prepares_then_takes_over(conductor, db):
    node = _node(conductor, db, 'manageable')
    mark = len(recording.calls(node.uuid))
    conductor.manager.do_provisioning_action(node.uuid, 'adopt')
    settled(db, node.id, states.ACTIVE)
    assert _since(node, mark) == ['power.validate', 'deploy.validate',
                                  'deploy.take_over']


def test_heartbeat_reaches_the_deploy_interface_shared(conductor, db):
    node = _node(conductor, db, 'available', fake_async=['deploy'])
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    settled(db, node.id, states.DEPLOYWAIT)
    token = agent_token.issue(db, node.id)
    conductor.manager.heartbeat(node.uuid, 'https://agent:9999', '10.0',
                                token)
    node = settled(db, node.id, states.ACTIVE)
    shared = [s for k, h, s in recording.CALLS[node.uuid]
              if (k, h) == ('deploy', 'heartbeat')]
    assert shared == [True]
    assert node.driver_internal_info['fake_agent_url'] == (
        'https://agent:9999')


def test_heartbeat_outside_an_agent_state_is_refused(conductor, db):
    node = _node(conductor, db, 'available')
    with pytest.raises(exception.NodeNotWaiting):
        conductor.manager.heartbeat(node.uuid, 'http://agent:9999')
    assert 'deploy.heartbeat' not in recording.calls(node.uuid)


@pytest.mark.parametrize('hooks, wait, end', [
    (['deploy'], states.DEPLOYWAIT, states.ACTIVE),
    (['erase_devices'], states.CLEANWAIT, states.AVAILABLE),
    (['inspect'], states.INSPECTWAIT, states.MANAGEABLE),
])
def test_a_wait_is_ended_by_a_vendor_passthru(conductor, db, hooks, wait,
                                              end):
    verb = {states.DEPLOYWAIT: 'active', states.CLEANWAIT: 'provide',
            states.INSPECTWAIT: 'inspect'}[wait]
    start = 'available' if verb == 'active' else 'manageable'
    node = _node(conductor, db, start, fake_async=hooks)
    conductor.manager.do_provisioning_action(node.uuid, verb)
    settled(db, node.id, wait)
    result = conductor.manager.vendor_passthru(node.uuid, 'finish_wait',
                                               'POST', {})
    assert result['async'] is False
    settled(db, node.id, end)


def test_inspect_wait_times_out(conductor, db, conf):
    conf.set_override('inspect_wait_timeout', 60, 'conductor')
    node = _node(conductor, db, 'manageable', fake_async=['inspect'])
    conductor.manager.do_provisioning_action(node.uuid, 'inspect')
    settled(db, node.id, states.INSPECTWAIT)
    later = datetime.datetime.utcnow() + datetime.timedelta(seconds=61)
    timeouts.ProvisionTimeouts().check_timeouts(
        dataclasses.replace(conductor.ctx, clock=lambda: later))
    node = settled(db, node.id, states.INSPECTFAIL)
    assert 'inspect_wait_timeout' in node.last_error


def test_resume_outside_a_wait_is_refused(conductor, db):
    node = _node(conductor, db, 'available')
    with pytest.raises(exception.InvalidStateRequested):
        conductor.manager.vendor_passthru(node.uuid, 'finish_wait', 'POST',
                                          {})
    assert node_obj.Node.get(db, node.id).provision_state == 'available'


def test_async_passthru_failure_lands_in_last_error(conductor, db):
    node = _node(conductor, db, 'manageable', fake_fail=['vendor'])
    # The vendor interface validates first: let validate pass.
    node = node_obj.Node.get(db, node.id)
    result = conductor.manager.vendor_passthru(
        node.uuid, 'record', 'POST', {'message': 'hi'})
    assert result == {'async': True, 'return': None}
    node = settled(db, node.id, states.MANAGEABLE)
    assert 'fake vendor failure' in node.last_error
