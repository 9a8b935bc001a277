#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: ferrum's Placement sync against the real Placement (gunicorn).

Starts Placement on loopback (tools/placement_server.py; SQLite, or
``--placement-db-url``), then, in one run:

1. a bare client (requests, no ferrum) creates ``--nodes`` providers with
   exactly the requests ferrum makes for a new node (GET its inventories,
   404; POST the provider; PUT its traits; PUT its inventory; the custom
   trait and class once), timed; half of them before step 2 and half
   after it, so that the machine's load and Placement's growing database
   weigh on both alike (the machine is shared);
2. ferrum's conductor syncs ``--nodes`` freshly enrolled nodes, timed from
   its start until the change queue is empty;
3. a reconcile with nothing changed, counting its writes to Placement;
4. ``--rate`` node changes per second (maintenance on, through the REST
   API, so ``reserved`` goes from 0 to 1) for ``--seconds``, each on
   another node, timing each from the API answer until its push to
   Placement returned;
5. the audit (every provider read back and compared).

Prints one JSON line: ``initial_sync_s``, ``bare_client_s`` and their
ratio, ``requests_per_node``, ``noop_reconcile_writes``,
``change_to_visible_p50_s`` / ``_p95_s``, ``drift``.
"""

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid as uuidlib

import requests
from keystoneauth1 import loading as ks_loading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))

from ferrum import conf as ferrum_conf  # noqa: E402
from ferrum.api import app as api_app  # noqa: E402
from ferrum.conductor import service  # noqa: E402
from ferrum.db import api as db_api  # noqa: E402
from ferrum.db import migration  # noqa: E402
from ferrum.objects import node as node_obj  # noqa: E402
from ferrum.placement import audit  # noqa: E402
from ferrum.placement import mapping  # noqa: E402
from ferrum.placement import outbox  # noqa: E402
from ferrum.placement import worker  # noqa: E402
from tools import placement_server  # noqa: E402

HEADERS = {'X-Auth-Token': 'admin',
           'OpenStack-API-Version': 'placement 1.28'}


def _start_placement(directory, db_url, workers):
    import socket
    import subprocess
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port = sock.getsockname()[1]
    argv, env = placement_server.command(directory, port, db_url,
                                         workers=workers)
    log = open(os.path.join(directory, 'gunicorn.log'), 'ab')
    proc = subprocess.Popen(argv, env=env, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(url, timeout=10).ok:
                return proc, url
        except requests.RequestException:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit('Placement did not start; see %s' % directory)
        time.sleep(0.1)


@contextlib.contextmanager
def _postgres(names):
    """A throwaway PostgreSQL cluster (tests/postgres.py) with databases
    ``names``: name -> URL."""
    from tests import postgres
    bindir = postgres.find_bindir()
    if bindir is None:
        raise SystemExit('--throwaway-postgres needs the PostgreSQL server '
                         'binaries (Debian package postgresql)')
    server = postgres.PostgresServer.create(bindir, postgres._run_as())
    try:
        server.start()
        for name in names:
            server.create_database(name)
        yield {name: server.url(name) for name in names}
    finally:
        server.close()


def _bare(url, count):
    """The same requests ferrum makes for new nodes, from a plain session."""
    session = requests.Session()
    session.headers.update(HEADERS)
    # Its own marker, the same length as ferrum's: its providers must not
    # look like orphans of ferrum's to the reconcile.
    marker = 'CUSTOM_FERRUM_BAREBEN'
    assert len(marker) == len(mapping.MANAGED)
    session.put(url + '/traits/%s' % marker).raise_for_status()
    session.put(url + '/resource_classes/CUSTOM_BENCH').raise_for_status()
    start = time.monotonic()
    made = []
    for _ in range(count):
        uuid = str(uuidlib.uuid4())
        made.append(uuid)
        rp = url + '/resource_providers/' + uuid
        assert session.get(rp + '/inventories').status_code == 404
        body = session.post(url + '/resource_providers',
                            json={'uuid': uuid, 'name': uuid}).json()
        body = session.put(rp + '/traits', json={
            'traits': [marker],
            'resource_provider_generation': body['generation']}).json()
        session.put(rp + '/inventories', json={
            'inventories': {'CUSTOM_BENCH': {
                'total': 1, 'reserved': 1, 'min_unit': 1, 'max_unit': 1,
                'step_size': 1, 'allocation_ratio': 1.0}},
            'resource_provider_generation':
                body['resource_provider_generation']}).raise_for_status()
    return time.monotonic() - start, made


def _wait_drained(db, timeout=1800.0):
    deadline = time.monotonic() + timeout
    while outbox.backlog(db).size:
        if time.monotonic() > deadline:
            raise SystemExit('the outbox did not drain')
        time.sleep(0.01)


def _changes(app, conductor, uuids, rate, seconds, clients):
    """Change ``rate`` nodes a second through the API, open loop: change i
    is due at ``i / rate`` whatever the answers before it, sent by one of
    ``clients`` threads (each its own test client). Returns the latencies
    (API answer to push returned, in s), the rate achieved (changes made
    over the time from the first due time to the last answer) and the
    p95 of how late a change was sent after its due time."""
    visible = {}
    sync = conductor.placement

    def seen(head, _outcome):
        visible.setdefault(head.node_uuid, time.monotonic())
    sync.on_pushed = seen
    count = min(len(uuids), int(rate * seconds))
    made = {}
    late = []
    start = time.monotonic() + 0.1

    def client_thread(offset):
        client = app.test_client()
        for index in range(offset, count, clients):
            due = start + index / rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            late.append(max(0.0, -delay))
            uuid = uuids[index]
            response = client.put('/v1/nodes/%s/maintenance' % uuid,
                                  json={'reason': 'bench'})
            assert response.status_code == 202, response.data
            made[uuid] = time.monotonic()
    threads = [threading.Thread(target=client_thread, args=(offset,))
               for offset in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    achieved = count / (max(made.values()) - start)
    _wait_drained(conductor.ctx.db)
    sync.on_pushed = None
    latencies = sorted(visible[u] - t for u, t in made.items()
                       if u in visible)
    assert len(latencies) == count, 'a change was never pushed'
    return latencies, achieved, statistics.quantiles(late, n=20)[18]


def _capacity(url, uuids, batch):
    """Placement's own rate for the writes the changes cost, on the bare
    client's providers, in the same run: one PUT of an inventory after
    another from one client, and ``batch`` providers per POST /reshaper
    (what ferrum sends), in providers per second."""
    session = requests.Session()
    session.headers.update(HEADERS)

    def inventory(reserved):
        return {'CUSTOM_BENCH': {'total': 1, 'reserved': reserved,
                                 'min_unit': 1, 'max_unit': 1,
                                 'step_size': 1, 'allocation_ratio': 1.0}}
    generations = {}
    for uuid in uuids:
        body = session.get(url + '/resource_providers/' + uuid).json()
        generations[uuid] = body['generation']
    start = time.monotonic()
    for uuid in uuids:
        body = session.put(url + '/resource_providers/%s/inventories' % uuid,
                           json={'inventories': inventory(0),
                                 'resource_provider_generation':
                                     generations[uuid]}).json()
        generations[uuid] = body['resource_provider_generation']
    put_rate = len(uuids) / (time.monotonic() - start)
    start = time.monotonic()
    for first in range(0, len(uuids), batch):
        chunk = uuids[first:first + batch]
        response = session.post(url + '/reshaper', headers={
            'OpenStack-API-Version': 'placement 1.30'}, json={
                'inventories': {uuid: {
                    'inventories': inventory(1),
                    'resource_provider_generation': generations[uuid]}
                    for uuid in chunk}, 'allocations': {}})
        assert response.status_code == 204, response.text
        # As ferrum does: one read-back for the batch's new generations.
        session.get(url + '/resource_providers/' + chunk[0]).json()
    reshape_rate = len(uuids) / (time.monotonic() - start)
    return put_rate, reshape_rate


def main() -> int:
    args = _parse()
    if not args.throwaway_postgres:
        return _run(args)
    with _postgres(['ferrum', 'placement']) as urls:
        args.url = urls['ferrum']
        if args.placement_on_postgres:
            args.placement_db_url = urls['placement']
        return _run(args)


def _parse():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--url', help='ferrum database URL (default: '
                                      'SQLite in a temporary directory)')
    parser.add_argument('--placement-db-url',
                        help='Placement database (default: SQLite)')
    parser.add_argument('--placement-workers', type=int, default=1)
    parser.add_argument('--rate', type=float, default=100.0)
    parser.add_argument('--seconds', type=float, default=5.0)
    parser.add_argument('--clients', type=int, default=4,
                        help='API client threads making the changes')
    parser.add_argument('--capacity-nodes', type=int, default=500,
                        help='bare providers Placement\'s own write rate '
                             'is measured on')
    parser.add_argument('--set', action='append', default=[],
                        metavar='OPTION=VALUE',
                        help='a [placement] option for ferrum, e.g. '
                             'push_workers=8')
    parser.add_argument('--throwaway-postgres', action='store_true',
                        help='run ferrum on a throwaway PostgreSQL cluster')
    parser.add_argument('--placement-on-postgres', action='store_true',
                        help='with --throwaway-postgres: Placement too')
    return parser.parse_args()


def _run(args):
    tmp = tempfile.mkdtemp(prefix='ferrum-bench-')
    proc, url = _start_placement(os.path.join(tmp, 'placement'),
                                 args.placement_db_url,
                                 args.placement_workers)
    try:
        bare_s, bare_uuids = _bare(url, args.nodes // 2)
        conf = ferrum_conf.new_conf()
        conf.set_override('state_path', tmp)
        conf.set_override('host', 'bench-conductor')
        conf.register_opts(
            ks_loading.get_auth_plugin_conf_options('admin_token'),
            group='placement')
        for key, value in (('auth_type', 'admin_token'), ('endpoint', url),
                           ('token', 'admin')):
            conf.set_override(key, value, group='placement')
        conf.set_override('sync_interval', 0, group='placement')
        for option in args.set:
            key, _, value = option.partition('=')
            conf.set_override(key, value, group='placement')
        db = db_api.Database(conf, url=args.url)
        migration.upgrade(db.engine)
        uuids = [node_obj.Node.create(db, {
            'driver': 'fake-hardware', 'resource_class': 'bench',
            'power_interface': 'fake', 'management_interface': 'fake',
            'boot_interface': 'fake', 'deploy_interface': 'fake',
            'inspect_interface': 'fake', 'vendor_interface': 'fake',
            'network_interface': 'noop',
            # Available, so that maintenance changes reserved (0 to 1).
            'provision_state': 'available', 'power_state': 'power off'}).uuid
            for _ in range(args.nodes)]
        conductor = service.ConductorService(conf, db=db)
        start = time.monotonic()
        conductor.start(start_periodics=False)
        _wait_drained(db)
        initial_s = time.monotonic() - start
        second_s, second_uuids = _bare(url, args.nodes - args.nodes // 2)
        bare_s += second_s
        bare_uuids += second_uuids
        client = conductor.placement.client
        requests_per_node = sum(client.requests.values()) / args.nodes
        writes = {m: client.requests.get(m, 0)
                  for m in ('PUT', 'POST', 'DELETE')}
        worker.Reconcile(conductor.placement).reconcile_placement(
            conductor.ctx)
        noop_writes = (sum(client.requests.get(m, 0) for m in writes)
                       - sum(writes.values()) + outbox.backlog(db).size)
        app = api_app.create_app(conf, db, conductor.manager)
        before = dict(client.requests)
        latencies, achieved, late_p95 = _changes(
            app, conductor, uuids, args.rate, args.seconds, args.clients)
        change_requests = (sum(client.requests.values())
                           - sum(before.values())) / len(latencies)
        drift = len(audit.drift(conductor.placement.pusher, deep=True))
        conductor.stop()
        put_rate, reshape_rate = _capacity(
            url, bare_uuids[:args.capacity_nodes],
            conf.placement.push_batch_size)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    quantiles = statistics.quantiles(latencies, n=20)
    print(json.dumps({
        'benchmark': 'placement_sync',
        'backend': 'sqlite' if not args.url else args.url.split(':')[0],
        'placement_backend': ('sqlite' if not args.placement_db_url
                              else 'postgresql'),
        'nodes': args.nodes,
        'initial_sync_s': round(initial_s, 2),
        'bare_client_s': round(bare_s, 2),
        'initial_vs_bare': round(initial_s / bare_s, 2),
        'requests_per_node': round(requests_per_node, 2),
        'noop_reconcile_writes': noop_writes,
        'changes_due_per_s': args.rate,
        'changes_per_s': round(achieved, 1),
        'changes_sent_late_p95_s': round(late_p95, 3),
        'requests_per_change': round(change_requests, 2),
        'change_to_visible_p50_s': round(statistics.median(latencies), 3),
        'change_to_visible_p95_s': round(quantiles[18], 3),
        'drift': drift,
        'placement_put_per_s': round(put_rate, 1),
        'placement_reshape_providers_per_s': round(reshape_rate, 1),
        'push_batch_size': conf.placement.push_batch_size,
        'push_workers': conf.placement.push_workers,
        'placement_workers': args.placement_workers,
        'load_1min': round(os.getloadavg()[0], 2),
    }))
    return 0


if __name__ == '__main__':
    sys.exit(main())
