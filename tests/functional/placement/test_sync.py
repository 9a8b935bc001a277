# SPDX-License-Identifier: Apache-2.0
"""Clashes, deletion, conflicts, the reconcile, the status view and the audit
command, against the real Placement (in-process)."""

import json
import uuid as uuidlib

import pytest

from ferrum.api import app as api_app
from ferrum.cmd import placement as placement_cmd
from ferrum.conductor import service
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.placement import audit
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement import outbox
from ferrum.placement import records
from ferrum.placement import sync
from ferrum.placement import worker
from tests.functional.conductor.flows import to_state
from tests.functional.placement.deployment import configure
from tests.functional.placement.scenario import assert_no_drift
from tests.functional.placement.scenario import auditor
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import provider
from tests.functional.placement.scenario import reserved
from tests.polling import wait_for


def _foreign_provider(client, uuid, traits, rc='CUSTOM_BM'):
    client.post('/resource_providers', {'uuid': uuid, 'name': uuid})
    for trait in traits:
        if trait.startswith('CUSTOM_'):
            client.put('/traits/%s' % trait)
    client.put('/resource_classes/%s' % rc)
    body = client.put('/resource_providers/%s/traits' % uuid, {
        'traits': sorted(traits), 'resource_provider_generation': 0})
    client.put('/resource_providers/%s/inventories' % uuid, {
        'inventories': {rc: {'total': 1, 'max_unit': 1}},
        'resource_provider_generation': body['resource_provider_generation']})


@pytest.mark.parametrize('traits', [['COMPUTE_NODE', 'OWNER_NOVA'],
                                    ['CUSTOM_SOMEONE_ELSES']])
def test_a_foreign_provider_is_refused_and_reported(synced, db, pclient,
                                                    traits):
    node_uuid = str(uuidlib.uuid4())
    _foreign_provider(pclient, node_uuid, traits)
    before = pclient.get('/resource_providers/%s' % node_uuid)['generation']
    synced.manager.create_node({'driver': 'fake-hardware', 'uuid': node_uuid,
                                'resource_class': 'bm'})
    converged(db)
    record = records.get(db, node_uuid)
    assert record.state == records.CLASH
    assert (traits[-1] if 'OWNER_NOVA' in traits
            else mapping.MANAGED) in record.last_error
    assert pclient.get('/resource_providers/%s' % node_uuid)[
        'generation'] == before
    (found,) = audit.drift(auditor(synced.conf, db, pclient))
    assert (found.kind, found.repairable) == ('clash', False)


def test_an_empty_provider_is_adopted(synced, db, pclient):
    """What a push killed between creating and marking a provider leaves."""
    node_uuid = str(uuidlib.uuid4())
    pclient.post('/resource_providers', {'uuid': node_uuid,
                                         'name': node_uuid})
    synced.manager.create_node({'driver': 'fake-hardware', 'uuid': node_uuid,
                                'resource_class': 'bm'})
    converged(db)
    assert provider(pclient, node_uuid)[1] == {mapping.MANAGED}
    assert_no_drift(synced.conf, db, pclient)


def test_deleting_a_node_deletes_its_provider(synced, db, pclient):
    node = synced.manager.create_node({'driver': 'fake-hardware',
                                       'resource_class': 'bm'})
    converged(db)
    assert provider(pclient, node.uuid) is not None
    synced.manager.destroy_node(node.uuid)
    converged(db)
    assert provider(pclient, node.uuid) is None
    assert records.get(db, node.uuid) is None
    assert_no_drift(synced.conf, db, pclient)


def test_reconcile_removes_only_confirmed_orphans(synced, db, pclient):
    kept = synced.manager.create_node({'driver': 'fake-hardware'})
    converged(db)
    orphan = str(uuidlib.uuid4())
    _foreign_provider(pclient, orphan, [mapping.MANAGED])
    unmarked = str(uuidlib.uuid4())
    _foreign_provider(pclient, unmarked, ['CUSTOM_SOMEONE_ELSES'])
    found = audit.drift(auditor(synced.conf, db, pclient))
    assert [(d.node_uuid, d.kind) for d in found] == [(orphan, 'orphan')]
    worker.Reconcile(synced.placement).reconcile_placement(synced.ctx)
    converged(db)
    assert provider(pclient, orphan) is None
    assert provider(pclient, unmarked) is not None
    assert provider(pclient, kept.uuid) is not None
    assert_no_drift(synced.conf, db, pclient)


def test_reconcile_of_an_unchanged_cloud_writes_nothing(synced, db, pclient):
    for _ in range(3):
        to_state(synced.manager, db, synced.manager.create_node(
            {'driver': 'fake-hardware', 'resource_class': 'bm'}), 'available')
    converged(db)
    client = synced.placement.client
    writes = {m: client.requests.get(m, 0) for m in ('PUT', 'POST', 'DELETE')}
    reconcile = worker.Reconcile(synced.placement)
    reconcile.reconcile_placement(synced.ctx)
    assert outbox.backlog(db).size == 0
    assert {m: client.requests.get(m, 0) for m in writes} == writes


def test_reconcile_repairs_a_foreign_change(synced, db, pclient):
    node = to_state(synced.manager, db, synced.manager.create_node(
        {'driver': 'fake-hardware', 'resource_class': 'bm'}), 'available')
    converged(db)
    inventories = pclient.get('/resource_providers/%s/inventories'
                              % node.uuid)
    pclient.put('/resource_providers/%s/inventories' % node.uuid, {
        'inventories': {'CUSTOM_BM': {'total': 1, 'reserved': 1,
                                      'max_unit': 1}},
        'resource_provider_generation':
            inventories['resource_provider_generation']})
    found = audit.drift(auditor(synced.conf, db, pclient))
    assert [d.kind for d in found] == ['inventory']
    worker.Reconcile(synced.placement).reconcile_placement(synced.ctx)
    converged(db)
    assert reserved(pclient, node.uuid) == 0
    assert_no_drift(synced.conf, db, pclient)


class _RacingClient(client_mod.PlacementClient):
    """Before each of its first ``races`` writes, another writer changes the
    provider (a trait of its own), as a concurrent service would."""

    def __init__(self, conf, other, races):
        super().__init__(conf)
        self.other = other
        self.races = races

    def put(self, url, body=None):
        if self.races and url.endswith(('/inventories', '/traits')):
            self.races -= 1
            uuid = url.split('/')[2]
            traits = self.other.get('/resource_providers/%s/traits' % uuid)
            mine = 'CUSTOM_RACER_%d' % self.races
            self.other.put('/traits/%s' % mine)
            self.other.put('/resource_providers/%s/traits' % uuid, {
                'traits': sorted(set(traits['traits']) | {mine}),
                'resource_provider_generation':
                    traits['resource_provider_generation']})
        return super().put(url, body)


def _node(db, **values):
    return node_obj.Node.create(db, dict({'driver': 'fake-hardware',
                                          'resource_class': 'bm'}, **values))


def _pushed(pconf, db, pclient):
    """A node whose marked provider exists (what the racers then change)."""
    node = _node(db)
    assert sync.Pusher(pconf, db, pclient).push(node.uuid) == sync.WRITTEN
    trait_obj.add(db, node.id, 'CUSTOM_NEW')
    return node


def test_generation_conflicts_are_reread_and_retried(pconf, db, pclient):
    slept = []
    racing = _RacingClient(pconf, pclient, races=2)
    pusher = sync.Pusher(pconf, db, racing, sleep=slept.append)
    node = _pushed(pconf, db, pclient)
    assert pusher.push(node.uuid) == sync.WRITTEN
    assert len(slept) == 2 and all(0 <= s <= 0.2 for s in slept)
    inventories, traits = provider(pclient, node.uuid)
    assert traits == {mapping.MANAGED, 'CUSTOM_RACER_0', 'CUSTOM_RACER_1',
                      'CUSTOM_NEW'}
    assert inventories['CUSTOM_BM']['reserved'] == 1
    assert_no_drift(pconf, db, pclient)


def test_conflict_retries_are_bounded(pconf, db, pclient):
    pconf.set_override('max_conflict_retries', 1, group='placement')
    racing = _RacingClient(pconf, pclient, races=5)
    pusher = sync.Pusher(pconf, db, racing, sleep=lambda s: None)
    node = _pushed(pconf, db, pclient)
    assert pusher.push(node.uuid) == sync.REFUSED
    assert racing.races == 3
    record = records.get(db, node.uuid)
    assert record.state == records.CONFLICT
    assert client_mod.CONCURRENT_UPDATE in record.last_error


def test_inventory_in_use_is_recorded_not_retried(pconf, db, pclient):
    pusher = sync.Pusher(pconf, db, pclient, sleep=pytest.fail)
    node = _node(db)
    node_obj.Node.get(db, node.id)
    pusher.push(node.uuid)
    fresh = node_obj.Node.get(db, node.id)
    fresh.provision_state = 'available'
    fresh.power_state = 'power off'
    fresh.save()
    pusher.push(node.uuid)
    pclient.put('/allocations/%s' % uuidlib.uuid4(), {
        'allocations': {node.uuid: {'resources': {'CUSTOM_BM': 1}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None})
    fresh.resource_class = 'other'
    fresh.save()
    puts = pclient.requests.get('PUT', 0)
    assert pusher.push(node.uuid) == sync.REFUSED
    # The class; the PUT with the recorded generation, which the
    # allocation bumped (409 concurrent_update, so it reads); the PUT that
    # is refused as in use, once.
    assert pclient.requests['PUT'] - puts == 3
    record = records.get(db, node.uuid)
    assert record.state == records.CONFLICT
    assert client_mod.INVENTORY_IN_USE in record.last_error


def test_status_api_and_command(synced, db, pconf, tmp_path, capsys):
    node = _node(db)
    converged(db)
    records.save_problem(db, node.uuid, records.CONFLICT, 'refused: test')
    app = api_app.create_app(pconf, db, synced.manager)
    response = app.test_client().get('/v1/placement/status')
    assert response.status_code == 200
    body = response.get_json()
    assert body['enabled'] is True
    assert body['backlog'] == {'changes': 0, 'nodes': 0,
                               'oldest_change_at': None}
    assert body['conductors'][0]['placement'] == 'ok'
    assert body['problems'][0]['node_uuid'] == node.uuid
    config = tmp_path / 'ferrum.conf'
    config.write_text(
        '[DEFAULT]\nstate_path = %s\n[placement]\nauth_type = admin_token\n'
        'endpoint = %s\ntoken = admin\n'
        % (tmp_path, pconf.placement.endpoint))
    assert placement_cmd.main(['--config-file', str(config), 'status']) == 1
    assert json.loads(capsys.readouterr().out)['problems'][0][
        'node_uuid'] == node.uuid
    # Stopped first: a push between the add and the stop would leave no
    # drift to find (the run of 0a30948's CI saw that race).
    synced.placement.stop()
    synced.placement = None
    trait_obj.add(db, node.id, 'CUSTOM_LATE')  # queued, not yet pushed
    assert placement_cmd.main(['--config-file', str(config), 'audit']) == 3
    out = capsys.readouterr().out
    assert '%s traits: missing CUSTOM_LATE' % node.uuid in out
    assert placement_cmd.main(['--config-file', str(config), 'audit',
                               '--heal']) == 0
    assert '0 nodes with drift' in capsys.readouterr().out


def test_unconfigured_changes_nothing(conf, db):
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    try:
        assert svc.placement is None
        node = svc.manager.create_node({'driver': 'fake-hardware'})
        trait_obj.add(db, node.id, 'CUSTOM_X')
        assert outbox.backlog(db).size == 0
    finally:
        svc.stop()


@pytest.mark.parametrize('options, named', [
    ({'auth_type': 'admin_token'}, '[placement] endpoint'),
    ({'auth_type': 'no-such-plugin'}, 'no-such-plugin'),
])
def test_bad_configuration_stops_start_up(conf, db, options, named):
    for key, value in options.items():
        conf.set_override(key, value, group='placement')
    svc = service.ConductorService(conf, db=db)
    with pytest.raises(errors.ConfigInvalid) as raised:
        svc.start(start_periodics=False)
    assert named in str(raised.value)


def test_unreachable_placement_does_not_stop_start_up(conf, db):
    configure(conf, 'http://127.0.0.1:9/placement')
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    try:
        node = svc.manager.create_node({'driver': 'fake-hardware'})
        wait_for(lambda: records.statuses(db)[0]['state']
                 == records.UNAVAILABLE, what='the outage to be recorded')
        assert outbox.backlog(db).nodes == 1
        assert node_obj.Node.get(db, node.id).provision_state == 'enroll'
    finally:
        svc.stop()


def test_an_old_placement_is_refused_naming_both_versions(conf):
    """A Placement before consumer generations (no such release can be
    installed next to 16.0.0, so a stand-in answers its version document).
    """
    from wsgi_intercept import interceptor

    def old_placement(environ, start_response):
        start_response('200 OK', [('Content-Type', 'application/json')])
        return [json.dumps({'versions': [{
            'id': 'v1.0', 'min_version': '1.0', 'max_version': '1.25',
            'status': 'CURRENT'}]}).encode()]
    url = 'http://old-placement.example:8778'
    configure(conf, url)
    with interceptor.RequestsInterceptor(lambda: old_placement, url=url):
        client = client_mod.PlacementClient(conf)
        with pytest.raises(errors.PlacementTooOld) as raised:
            client.get('/resource_providers')
    assert 'up to 1.25; ferrum needs 1.28' in str(raised.value)
