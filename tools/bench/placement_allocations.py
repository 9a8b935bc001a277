#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: allocations through Placement (``[allocation] backend =
placement``) against the real Placement, with two baselines on the same
Placement in the same run.

Starts Placement on loopback (tools/placement_server.py; SQLite with one
worker, or ``--placement-db-url``), enrolls ``--nodes`` available nodes of
resource class ``bench`` with trait ``CUSTOM_BENCH`` and lets ferrum's
conductor sync them (not timed), then, each with ``--concurrency``
threads:

1. ``put_capacity``: a bare client (``requests``) claims every provider
   with ``PUT /allocations/{new uuid}`` alone (``consumer_generation:
   null``), each thread its own share of providers: Placement's own
   capacity for the one write every claim needs. Released afterwards
   (not timed).
2. ``nova_style``: a bare client claims as nova's scheduler does: ``GET
   /allocation_candidates?resources=CUSTOM_BENCH:1&required=CUSTOM_BENCH``
   then ``PUT /allocations/{new uuid}`` on a random candidate, asking
   again after a 409, until every node is taken. Released afterwards.
3. ``ferrum``: the neutral allocation flow of tools/bench/allocations.py,
   through ferrum's REST API (``POST /v1/allocations`` with resource class
   ``bench`` and trait ``CUSTOM_BENCH``, in-process WSGI) until every node
   is allocated (``--reserve-held``: with issue 19's rule that a node an
   allocation holds is reserved even while ``available``, for comparison;
   the shipped rule reserves it once deploying, which this benchmark does
   not do); then checked from
   both sides (no node held by two
   allocations, every allocation's node holding its consumer and no
   other), audited (providers and consumers), and deleted
   (``DELETE /v1/allocations``), timed.

Prints one JSON line: ``allocs_per_s``, ``p50_latency_s``,
``p95_latency_s``, ``errors``, ``double_allocated``, ``audit_orphans``
(and the whole drift count), ``deletes_per_s``,
``nova_style_claims_per_s``, ``put_capacity_per_s`` and the two ratios
the targets are about.
"""

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import uuid as uuidlib

import requests
from keystoneauth1 import loading as ks_loading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import placement_sync  # noqa: E402  (Placement start-up is shared)

from ferrum import conf as ferrum_conf  # noqa: E402
from ferrum.api import app as api_app  # noqa: E402
from ferrum.conductor import service  # noqa: E402
from ferrum.db import api as db_api  # noqa: E402
from ferrum.db import migration  # noqa: E402
from ferrum.objects import node as node_obj  # noqa: E402
from ferrum.objects import trait as trait_obj  # noqa: E402
from ferrum.placement import audit  # noqa: E402
from ferrum.placement import consumer_audit  # noqa: E402
from ferrum.placement import mapping  # noqa: E402
from ferrum.placement.resources import providers  # noqa: E402

RC = 'CUSTOM_BENCH'
TRAIT = 'CUSTOM_BENCH'
_API = {'X-OpenStack-Ironic-API-Version': '1.58'}


def _percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return round(ordered[index], 4)


def _threads(count, target, *args):
    """Run ``target(i, *args)`` on ``count`` threads; seconds taken.
    A thread's exception ends the benchmark (threads swallow SystemExit)."""
    failures = []

    def run(index):
        try:
            target(index, *args)
        except BaseException as exc:
            failures.append(exc)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit('a benchmark thread failed: %r' % failures[0])
    return time.monotonic() - start


def _session():
    session = requests.Session()
    session.headers.update(placement_sync.HEADERS)
    return session


def _claim(session, url, provider):
    consumer = str(uuidlib.uuid4())
    response = session.put(url + '/allocations/' + consumer, json={
        'allocations': {provider: {'resources': {RC: 1}}},
        'consumer_generation': None, 'project_id': 'bench',
        'user_id': 'bench'})
    return consumer if response.status_code == 204 else None


def _release_all(url, consumers, concurrency):
    shares = [consumers[i::concurrency] for i in range(concurrency)]

    def release(index):
        session = _session()
        for consumer in shares[index]:
            session.delete(url + '/allocations/' + consumer)
    _threads(concurrency, release)


def _put_capacity(url, providers, concurrency):
    """Claims per second with PUT /allocations alone."""
    shares = [providers[i::concurrency] for i in range(concurrency)]
    made = []

    def claim(index):
        session = _session()
        for provider in shares[index]:
            consumer = _claim(session, url, provider)
            if consumer is None:
                raise SystemExit('PUT /allocations refused on %s' % provider)
            made.append(consumer)
    seconds = _threads(concurrency, claim)
    _release_all(url, made, concurrency)
    return len(made) / seconds


def _nova_style(url, total, concurrency):
    """Claims per second with nova's two calls per claim."""
    made = []
    query = (url + '/allocation_candidates?resources=%s:1&required=%s'
             % (RC, TRAIT))

    def claim(_index):
        session = _session()
        while len(made) < total:
            response = session.get(query)
            if response.status_code != 200:
                raise SystemExit('GET /allocation_candidates answered %d: '
                                 '%s' % (response.status_code,
                                         response.text[:300]))
            body = response.json()
            offered = [uuid for request in body['allocation_requests']
                       for uuid in request['allocations']]
            if not offered:
                return
            consumer = _claim(session, url, random.choice(offered))
            if consumer is not None:
                made.append(consumer)
    seconds = _threads(concurrency, claim)
    _release_all(url, made, concurrency)
    return len(made) / seconds


def _ferrum(app, total, concurrency):
    """The allocation flow through the API: latencies, errors, seconds."""
    latencies, errors, made = [], [], []
    budget = iter(range(total))
    lock = threading.Lock()

    def allocate(_index):
        client = app.test_client()
        while True:
            with lock:
                if next(budget, None) is None:
                    return
            start = time.monotonic()
            response = client.post('/v1/allocations', headers=_API, json={
                'resource_class': 'bench', 'traits': [TRAIT]})
            body = response.get_json()
            while response.status_code in (200, 201) and (
                    body['state'] == 'allocating'):
                time.sleep(0.01)
                response = client.get('/v1/allocations/%s' % body['uuid'],
                                      headers=_API)
                body = response.get_json()
            latencies.append(time.monotonic() - start)
            if response.status_code >= 300 or body['state'] != 'active':
                errors.append(str(body)[:300])
            else:
                made.append(body['uuid'])
    seconds = _threads(concurrency, allocate)
    return latencies, errors, made, seconds


def _double(db, client):
    """Nodes held twice: by two allocations in ferrum, or in Placement by
    anything but their one allocation's consumer."""
    holders = {}
    for node in node_obj.Node.list(db):
        consumers = set(providers.consumers_of(client, node.uuid))
        wanted = {node.instance_uuid} if node.allocation_id else set()
        if len(consumers) > 1 or (wanted and consumers != wanted):
            holders[node.uuid] = consumers
    return len(holders)


def _delete(app, made, concurrency):
    shares = [made[i::concurrency] for i in range(concurrency)]
    failures = []

    def delete(index):
        client = app.test_client()
        for uuid in shares[index]:
            response = client.delete('/v1/allocations/%s' % uuid,
                                      headers=_API)
            if response.status_code != 204:
                failures.append(response.status_code)
    return _threads(concurrency, delete), failures


def _conf(tmp, url):
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', tmp)
    conf.set_override('host', 'bench-conductor')
    conf.register_opts(ks_loading.get_auth_plugin_conf_options('admin_token'),
                       group='placement')
    for key, value in (('auth_type', 'admin_token'), ('endpoint', url),
                       ('token', 'admin')):
        conf.set_override(key, value, group='placement')
    conf.set_override('sync_interval', 0, group='placement')
    conf.set_override('backend', 'placement', group='allocation')
    return conf


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--concurrency', type=int, default=8)
    parser.add_argument('--url', help='ferrum database URL (default: '
                                      'SQLite in a temporary directory)')
    parser.add_argument('--placement-db-url',
                        help='Placement database (default: SQLite)')
    parser.add_argument('--placement-workers', type=int, default=1)
    parser.add_argument('--reserve-held', action='store_true',
                        help='keep issue 19\'s rule with this backend (a '
                             'node an allocation holds is reserved even '
                             'while available): for comparison only')
    args = parser.parse_args()
    if args.reserve_held:
        reserved = mapping.reserved
        mapping.reserved = lambda node, claims=False: reserved(node)
    tmp = tempfile.mkdtemp(prefix='ferrum-bench-')
    proc, url = placement_sync._start_placement(
        os.path.join(tmp, 'placement'), args.placement_db_url,
        args.placement_workers)
    try:
        conf = _conf(tmp, url)
        db = db_api.Database(conf, url=args.url)
        migration.upgrade(db.engine)
        for _ in range(args.nodes):
            node = node_obj.Node.create(db, {
                'driver': 'fake-hardware', 'resource_class': 'bench',
                'provision_state': 'available', 'power_state': 'power off',
                **{'%s_interface' % kind: 'fake' for kind in (
                    'power', 'management', 'boot', 'deploy', 'inspect',
                    'vendor')}, 'network_interface': 'noop'})
            trait_obj.set_for_node(db, node.id, [TRAIT])
        conductor = service.ConductorService(conf, db=db)
        conductor.start(start_periodics=False)
        placement_sync._wait_drained(db)  # the initial sync, not timed
        providers = [node.uuid for node in node_obj.Node.list(db)]
        put_rate = _put_capacity(url, providers, args.concurrency)
        nova_rate = _nova_style(url, args.nodes, args.concurrency)
        app = api_app.create_app(conf, db, conductor.manager)
        client = conductor.placement.client
        latencies, errors, made, seconds = _ferrum(app, args.nodes,
                                                   args.concurrency)
        placement_sync._wait_drained(db)
        double = _double(db, client)
        # The conductor's pusher: its mapping (patched with
        # --reserve-held) is the one the audit compares against.
        pusher = conductor.placement.pusher
        consumers = consumer_audit.drift(pusher)
        drift = audit.drift(pusher, deep=True)
        delete_s, delete_failures = _delete(app, made, args.concurrency)
        conductor.stop()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    rate = len(made) / seconds
    print(json.dumps({
        'benchmark': 'placement_allocations',
        'database': 'sqlite' if not args.url else args.url.split(':')[0],
        'placement_database': ('sqlite' if not args.placement_db_url
                               else 'postgresql'),
        'placement_workers': args.placement_workers,
        'reserve_held': args.reserve_held,
        'nodes': args.nodes, 'concurrency': args.concurrency,
        'allocs_per_s': round(rate, 1),
        'p50_latency_s': _percentile(latencies, 0.50),
        'p95_latency_s': _percentile(latencies, 0.95),
        'errors': len(errors), 'first_error': errors[0] if errors else None,
        'double_allocated': double,
        'audit_orphans': sum(1 for d in consumers
                             if d.kind == consumer_audit.ORPHAN),
        'audit_drift': len(consumers) + len(drift),
        'deletes_per_s': round(len(made) / delete_s, 1),
        'delete_failures': len(delete_failures),
        'nova_style_claims_per_s': round(nova_rate, 1),
        'put_capacity_per_s': round(put_rate, 1),
        'vs_nova_style': round(rate / nova_rate, 2),
        'vs_put_capacity': round(rate / put_rate, 2),
    }))
    return 1 if errors or double or consumers or drift else 0


if __name__ == '__main__':
    sys.exit(main())
