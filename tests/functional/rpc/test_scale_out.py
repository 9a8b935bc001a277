# SPDX-License-Identifier: Apache-2.0
"""Scale-out: one ``ferrum-api`` and three ``ferrum-conductor`` processes.

All share one real PostgreSQL and talk over loopback; the test is a client
with plain HTTP. 300 fake nodes are enrolled and made available, then
deploys and allocations run from several threads while one conductor is
killed (SIGKILL) in the middle: its nodes and allocations must end up with
the two others, none stuck, its active nodes taken over. Then a second
conductor is stopped gracefully (SIGTERM): its nodes must move to the last
one without a single failure.

Intervals are short in the processes' config files so that this takes
seconds, and every wait polls with a deadline.
"""

import collections
import concurrent.futures
import threading
from collections.abc import Callable, Iterable
from typing import Any

import pytest
import requests

from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.drivers.fake import interfaces as fake
from ferrum.objects import conductor as conductor_obj
from ferrum.objects import node as node_obj
from tests.functional.rpc import cluster
from tests.polling import wait_for

HOSTS = ('conductor-1', 'conductor-2', 'conductor-3')
KILLED, STOPPED, LAST = HOSTS
NODES = 300
#: Of the nodes: deployed in the chaos phase / held back for the graceful
#: stop / the allocation pool (resource class "gold").
DEPLOYED, HELD, GOLD = 150, 60, 90
ALLOCATIONS = 60
#: Deploys that take this long are still running when a conductor goes.
SLOW_DEPLOY = '2'
THREADS = 4
HEARTBEAT_TIMEOUT = 5
CONDUCTOR = {'conductor': {
    'check_provision_state_interval': '1',
    'check_allocations_interval': '1',
    'sync_local_state_interval': '1',
    # The power sync has its own test; here it would only add load.
    'sync_power_state_interval': '0',
    'graceful_shutdown_timeout': '30',
    'node_locked_retry_interval': '0.2',
    'heartbeat_timeout': str(HEARTBEAT_TIMEOUT)}}
NODE_FIELDS = ('uuid,provision_state,reservation,conductor,maintenance,'
               'resource_class,driver_internal_info,last_error')
SETTLED = states.STABLE_STATES | states.FAILURE_STATES


class Client:
    """Plain HTTP, one session per thread; every status is recorded."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.phase = 'setup'
        self.statuses: collections.Counter[tuple[str, int]] = (
            collections.Counter())
        self.server_errors: list[str] = []
        self._lock = threading.Lock()
        self._local = threading.local()

    def call(self, method: str, path: str, **kwargs: Any
             ) -> requests.Response:
        session = getattr(self._local, 'session', None)
        if session is None:
            session = self._local.session = requests.Session()
        response = session.request(method, self.url + path,
                                   headers=cluster.HEADERS, timeout=90,
                                   **kwargs)
        with self._lock:
            self.statuses[self.phase, response.status_code] += 1
            if response.status_code >= 500:
                self.server_errors.append('%s %s %s %d: %s' % (
                    self.phase, method, path, response.status_code,
                    response.text[:300]))
        return response

    def nodes(self) -> list[dict[str, Any]]:
        response = self.call('GET', '/v1/nodes', params={
            'fields': NODE_FIELDS, 'limit': 1000})
        assert response.status_code == 200, response.text
        return response.json()['nodes']

    def allocations(self) -> list[dict[str, Any]]:
        response = self.call('GET', '/v1/allocations', params={
            'fields': 'uuid,state,last_error', 'limit': 1000})
        assert response.status_code == 200, response.text
        return response.json()['allocations']

    def provision(self, uuid: str, target: str) -> requests.Response:
        return self.call('PUT', '/v1/nodes/%s/states/provision' % uuid,
                         json={'target': target})

    def server_errors_in(self, *phases: str, but: int | None = None
                         ) -> list[str]:
        return [e for e in self.server_errors if e.split()[0] in phases
                and (but is None or ' %d: ' % but not in e)]


def _in_threads(func: Callable[[Any], Any], items: Iterable[Any]) -> list:
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(func, items))


def _wait_nodes(client: Client, check: Callable[[list[dict]], Any],
                what: str, timeout: float = 90) -> list[dict[str, Any]]:
    """Poll the node list until ``check`` is true of it (it may assert)."""
    return wait_for(lambda: (lambda nodes: nodes if check(nodes) else None)(
        client.nodes()), timeout=timeout, interval=0.25, what=what)


def _settled(nodes: list[dict[str, Any]]) -> bool:
    return all(n['provision_state'] in SETTLED and n['reservation'] is None
               for n in nodes)


def _enroll(client: Client) -> list[dict[str, Any]]:
    def one(index: int) -> dict[str, Any]:
        gold = index >= NODES - GOLD
        info = {} if gold or index % 3 else {
            'fake_deploy_seconds': SLOW_DEPLOY}
        response = client.call('POST', '/v1/nodes', json={
            'driver': 'fake-hardware', 'driver_info': info,
            'resource_class': 'gold' if gold else 'deploy'})
        assert response.status_code == 201, response.text
        return response.json()
    return _in_threads(one, range(NODES))


def _make_available(client: Client, uuids: list[str]) -> None:
    for action, state in (('manage', states.MANAGEABLE),
                          ('provide', states.AVAILABLE)):
        codes = _in_threads(
            lambda u, action=action: client.provision(u, action).status_code,
            uuids)
        assert set(codes) == {202}, collections.Counter(codes)
        _wait_nodes(client, lambda nodes, state=state: all(
            n['provision_state'] == state and n['reservation'] is None
            for n in nodes), 'every node %s' % state)


@pytest.fixture
def deployment(tmp_path, conf, pg_url):
    """(Client, conductor processes by host, database)."""
    with cluster.running(tmp_path, conf, pg_url, HOSTS, CONDUCTOR) as (
            url, procs, db):
        yield Client(url), procs, db


def _ids(db: db_api.Database) -> dict[str, int]:
    return {c.hostname: c.id for c in conductor_obj.list_all(db)}


def _affinities(db: db_api.Database) -> dict[str, int | None]:
    return {row.uuid: row.conductor_affinity for row in
            node_obj.Node.list_columns(db, ('uuid', 'conductor_affinity'))}


def _handled_by_live(db: db_api.Database, live: set[str]
                     ) -> Callable[[list[dict]], bool]:
    """The check that the cluster has settled on the ``live`` conductors."""
    ids = _ids(db)

    def check(nodes: list[dict[str, Any]]) -> bool:
        if not _settled(nodes) or any(n['conductor'] not in live
                                      for n in nodes):
            return False
        affinity = _affinities(db)
        # Every active node deployed or taken over by its current owner.
        return all(affinity[n['uuid']] == ids[n['conductor']]
                   for n in nodes if n['provision_state'] == states.ACTIVE)
    return check


def _chaos(client: Client, procs: dict, db: db_api.Database,
           nodes: list[dict[str, Any]]) -> tuple[set[str], list[str]]:
    """Deploys and allocations from several threads; a conductor killed.

    :returns: the nodes the killed conductor had deployed, and the
        allocations created.
    """
    deploys = [n['uuid'] for n in nodes
               if n['resource_class'] == 'deploy'][:DEPLOYED]
    jobs = [('deploy', uuid) for uuid in deploys]
    for index in range(ALLOCATIONS):
        jobs.insert(index * len(jobs) // ALLOCATIONS, ('allocate', None))
    done = [0]
    lock = threading.Lock()
    killed_active: set[str] = set()
    allocations: list[str] = []

    def kill() -> None:
        procs[KILLED][0].kill()
        procs[KILLED][0].wait()
        killed_id = _ids(db)[KILLED]
        killed_active.update(
            row.uuid for row in node_obj.Node.list_columns(
                db, ('uuid',), {'provision_state': states.ACTIVE,
                                'conductor_affinity': killed_id}))

    def run(job: tuple[str, str | None]) -> None:
        kind, uuid = job
        if kind == 'deploy':
            response = client.provision(str(uuid), 'active')
            assert response.status_code in (202, 503), response.text
        else:
            response = client.call('POST', '/v1/allocations',
                                   json={'resource_class': 'gold'})
            assert response.status_code in (201, 503), response.text
            if response.status_code == 201:
                with lock:
                    allocations.append(response.json()['uuid'])
        with lock:
            done[0] += 1
            now = done[0] == len(jobs) // 2
        if now:
            kill()

    _in_threads(run, jobs)
    return killed_active, allocations


def test_conductors_die_and_stop_without_losing_nodes(deployment):
    client, procs, db = deployment
    client.phase = 'enroll'
    nodes = _enroll(client)
    _make_available(client, [n['uuid'] for n in nodes])
    assert {n['conductor'] for n in client.nodes()} == set(HOSTS)

    client.phase = 'chaos'
    killed_active, allocations = _chaos(client, procs, db, client.nodes())
    assert killed_active, 'no node of %s was active when it died' % KILLED
    client.phase = 'take-over'
    live = {STOPPED, LAST}
    _wait_nodes(client, _handled_by_live(db, live),
                'the nodes of %s to move to %s' % (KILLED, live))
    wait_for(lambda: all(a['state'] in ('active', 'error')
                         for a in client.allocations()),
             timeout=60, interval=0.25, what='every allocation to finish')
    # The listing the check passed on may predate the take-over whose
    # affinity it then read from the database; a take-over writes the
    # affinity with the driver's own changes, so a listing made now shows
    # both.
    nodes = client.nodes()
    assert len(allocations) >= ALLOCATIONS // 2
    by_uuid = {n['uuid']: n for n in nodes}
    for uuid in killed_active:
        node = by_uuid[uuid]
        assert node['provision_state'] == states.ACTIVE, node
        assert node['driver_internal_info'][fake.TAKEN_OVER_BY] == (
            node['conductor']), node
    assert not client.server_errors_in('enroll', 'take-over'), (
        client.server_errors)
    assert not client.server_errors_in('chaos', but=503), (
        client.server_errors)

    client.phase = 'graceful'
    before = {n['uuid']: n for n in nodes}
    held = [n['uuid'] for n in nodes if n['conductor'] == STOPPED
            and n['provision_state'] == states.AVAILABLE
            and n['resource_class'] == 'deploy'
            and n['driver_internal_info'] == {}][:6]
    # Slow deploys under way on the conductor that is about to stop.
    for uuid in held:
        assert client.call('PATCH', '/v1/nodes/%s' % uuid, json=[{
            'op': 'add', 'path': '/driver_info/fake_deploy_seconds',
            'value': SLOW_DEPLOY}]).status_code == 200
        assert client.provision(uuid, 'active').status_code == 202
    proc, out_path = procs[STOPPED]
    proc.terminate()
    # Calls about its nodes while it drains reach the last conductor.
    for node in nodes:
        if (node['conductor'] == STOPPED and node['uuid'] not in held
                and node['provision_state'] == states.AVAILABLE):
            response = client.call('PATCH', '/v1/nodes/%s' % node['uuid'],
                                   json=[{'op': 'add', 'path': '/extra/seen',
                                          'value': True}])
            assert response.status_code in (200, 409), response.text
    assert proc.wait(timeout=60) == 0, cluster.output(out_path)
    nodes = _wait_nodes(client, _handled_by_live(db, {LAST}),
                        'the nodes of %s to move to %s' % (STOPPED, LAST))
    for node in nodes:
        old = before[node['uuid']]
        assert node['maintenance'] == old['maintenance'], node
        if node['uuid'] in held:
            assert node['provision_state'] == states.ACTIVE, node
        elif old['provision_state'] not in states.FAILURE_STATES:
            assert node['provision_state'] == old['provision_state'], node
    assert not client.server_errors_in('graceful'), client.server_errors
