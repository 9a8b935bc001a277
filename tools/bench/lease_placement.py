# SPDX-License-Identifier: Apache-2.0
"""``tools/bench/leases.py --placement``: the start and end of a lease
with Placement (issue 22), against the same lease without it, in one run.

Starts the real Placement on loopback (tools/placement_server.py,
gunicorn; SQLite with one worker, or PostgreSQL with
``--placement-on-postgres``) and two conductors in this process, each on
its own ferrum database (SQLite files, or databases of one
``--throwaway-postgres`` cluster), both with ``--nodes`` available
fake-hardware nodes of class ``bench`` (``[lease] cleaning_margin = 0``,
so that an ended lease's nodes serve the next one):

- ``placement``: ``[placement]`` set, ``[allocation] backend =
  --allocation-backend`` (default ``placement``), its nodes synced before
  anything is timed;
- ``plain``: no ``[placement]``: the same lease engine, nothing else.

For each size (1, 10, 100 nodes), ``--repetitions`` times, alternating
the two conductors (the machine is shared: both see the same load), a
lease is created through the REST API (Flask's client, no ``start``: due
at once) and this thread then calls ``engine.run`` back to back until
the lease is ``active`` (``start``: from the API's answer); then
``--allocated`` of its nodes (a fraction, default 0) are allocated under
it (owner = its project, not timed); then ``DELETE /v1/leases/{uuid}``
and ``engine.run`` until ``ended`` (``end``: from the DELETE's answer).
``engine_runs`` counts the runs each transition needed (1 is the least).

The engine's polling is not used by default: ``[lease] check_interval``
(2 s by default) adds the same wait, up to the interval, to both
conductors and hides the work behind it. With ``--check-interval S``
the conductors run their periodic lease engine at that interval instead
and the benchmark watches the leases (every 5 ms): what a user sees.
Each creation and DELETE then waits a random part of the interval first,
as a user's request arrives at any point of the engine's cycle.

With Placement, the benchmark then waits until the sync worker pushed
the reservation inventory (``inventory_s``: from the start's answer
until the change queue is empty) and, after the end, until the inventory
is gone and an engine run deleted the lease's class (``class_gone_s``,
from the DELETE's answer). ``bare_claim``: Placement's own time for the
start's one claim, a bare client's ``POST /allocations`` of a new
consumer on as many providers, between the leases.

Every request to Placement is counted by the thread that sent it
(``engine``: this thread, which serves the API, and the lease engine
wherever it runs; ``sync``: any other, the conductor's sync worker) and
by method and path (uuids and class names folded), per lease: ``create``
(the API's ``POST /v1/leases``), ``start`` (until the inventory is
pushed), ``allocate``, ``end`` (until ``ended``) and ``after_end``
(inventory removal and class deletion). ``engine_placement_ms``: the
engine's wait for each call (median per lease). ``claim_requests``
counts the engine's requests on consumers (``/allocations...``) per
start and end; ``o1_claims_start`` is true when the largest lease needs
no more of them than the smallest (the exit status is 1 otherwise).
``p95_ratio`` is the p95 with Placement over the p95 without;
``latency_target``: every ratio ≤ 2.

Prints one JSON line.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import random
import re
import signal
import statistics
import tempfile
import threading
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import placement_sync  # tools/bench/, on sys.path (leases.py)
import requests
from keystoneauth1 import loading as ks_loading

from ferrum import conf as ferrum_conf
from ferrum.api import app as api_app
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.leases import engine
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod

SIZES = (1, 10, 100)
_UUID = re.compile('[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                   '[0-9a-f]{12}')
_CLASS = re.compile('CUSTOM_RESERVATION_[0-9A-F_]+')
_PHASES = ('create', 'start', 'allocate', 'end', 'after_end')


class Counter:
    """Placement requests of every client in this process, by sender
    (``engine``: the benchmark's thread, which also serves the API, and
    the lease engine wherever it runs; ``sync``: any other thread, the
    conductor's sync worker) and by ``METHOD path``: instrumentation of
    the one module that talks to Placement."""

    def __init__(self) -> None:
        self.counts: collections.Counter[tuple[str, str]] = (
            collections.Counter())
        #: Seconds spent in those requests, by the same keys.
        self.seconds: collections.Counter[tuple[str, str]] = (
            collections.Counter())
        self._lock = threading.Lock()
        self._main = threading.get_ident()
        self._engine = threading.local()

    def install(self) -> None:
        call = client_mod.PlacementClient._call
        run = engine.run
        counter = self

        def counted(client: Any, method: str, url: str,
                    *args: Any, **kwargs: Any) -> Any:
            path = _CLASS.sub('{class}', _UUID.sub('{uuid}', url))
            who = ('engine' if threading.get_ident() == counter._main
                   or getattr(counter._engine, 'on', False) else 'sync')
            key = who, '%s %s' % (method, path.split('?')[0])
            began = time.monotonic()
            try:
                return call(client, method, url, *args, **kwargs)
            finally:
                with counter._lock:
                    counter.counts[key] += 1
                    counter.seconds[key] += time.monotonic() - began

        def engine_run(ctx: Any) -> None:
            counter._engine.on = True
            try:
                run(ctx)
            finally:
                counter._engine.on = False
        client_mod.PlacementClient._call = counted  # type: ignore
        # The periodic task calls the module's run() by name.
        engine.run = engine_run

    def snapshot(self) -> tuple[collections.Counter[tuple[str, str]],
                                collections.Counter[tuple[str, str]]]:
        with self._lock:
            return (collections.Counter(self.counts),
                    collections.Counter(self.seconds))


class Site:
    """A conductor, its API and its database."""

    def __init__(self, name: str, tmp: str, url: str | None,
                 placement_url: str | None, backend: str,
                 nodes: int, interval: float | None) -> None:
        conf = ferrum_conf.new_conf()
        conf.set_override('state_path', os.path.join(tmp, name))
        os.makedirs(conf.state_path, exist_ok=True)
        conf.set_override('host', 'bench-%s' % name)
        conf.set_override('sync_power_state_interval', 0, 'conductor')
        conf.set_override('cleaning_margin', 0, 'lease')
        if interval is not None:
            conf.set_override('check_interval', interval, 'lease')
        self.periodic = interval is not None
        self.interval = interval or 0.0
        if placement_url is not None:
            conf.register_opts(
                ks_loading.get_auth_plugin_conf_options('admin_token'),
                group='placement')
            for key, value in (('auth_type', 'admin_token'),
                               ('endpoint', placement_url),
                               ('token', 'admin')):
                conf.set_override(key, value, group='placement')
            conf.set_override('sync_interval', 0, group='placement')
            conf.set_override('poll_interval', 0.01, group='placement')
            conf.set_override('backend', backend, group='allocation')
        self.name = name
        self.placed = placement_url is not None
        self.db = db_api.Database(conf, url=url or 'sqlite:///%s' % (
            os.path.join(conf.state_path, 'ferrum.sqlite')))
        migration.upgrade(self.db.engine)
        _enroll(self.db, nodes)
        self.conductor = service.ConductorService(
            conf, db=self.db, extra_periodics=[engine.LeaseEngine()])
        self.conductor.start(start_periodics=False)
        assert self.conductor.ctx is not None
        self.ctx = self.conductor.ctx
        self.client = api_app.create_app(
            conf, self.db, self.conductor.manager).test_client()
        if self.placed:
            placement_sync._wait_drained(self.db)
        if self.periodic:
            self.conductor.start_periodics()

    def arrive(self) -> None:
        """With the periodic engine, wait a random part of its interval:
        a request arrives at any time of the engine's cycle, not always
        just after a run (where the benchmark's previous wait ended)."""
        if self.periodic:
            time.sleep(random.uniform(0, self.interval))

    def drained(self) -> None:
        if self.placed:
            placement_sync._wait_drained(self.db, timeout=120)

    def until(self, uuid: str, done: Any) -> tuple[float, int]:
        """Run the engine until ``done(lease)`` (or, with the conductor's
        periodic engine, watch for it); (when, engine runs; 0 watched)."""
        deadline = time.monotonic() + 120
        runs = 0
        while time.monotonic() < deadline and runs < 50:
            if self.periodic:
                time.sleep(0.005)
            else:
                engine.run(self.ctx)
                runs += 1
            lease = lease_obj.Lease.get(self.db, uuid)
            if done(lease):
                return time.monotonic(), runs
        raise SystemExit('%s: lease %s stuck in %s: %s' % (
            self.name, uuid, lease.status, lease.last_error))

    def close(self) -> None:
        self.conductor.stop()
        self.db.dispose()


def _enroll(db: db_api.Database, count: int) -> None:
    """Nodes created one by one (the Placement site's outbox sees them)."""
    fake = {'%s_interface' % kind: 'fake' for kind in (
        'power', 'management', 'boot', 'deploy', 'inspect', 'vendor')}
    for _ in range(count):
        node_obj.Node.create(db, dict(
            fake, driver='fake-hardware', resource_class='bench',
            provision_state='available', power_state='power off',
            network_interface='noop',
            # The end's claims are counted per engine run: a free node's
            # cleaning at the end would add a run (doc/leases.md).
            automated_clean=False))


def _allocate(site: Site, count: int) -> None:
    """``count`` allocations under the lease (owner = its project)."""
    assert site.conductor.manager is not None
    for _ in range(count):
        made = site.conductor.manager.create_allocation(
            {'resource_class': 'bench', 'owner': 'bench'}, [])
        if made.state != 'active':
            raise SystemExit('%s: allocation %s is %s: %s' % (
                site.name, made.uuid, made.state, made.last_error))


def _one(site: Site, size: int, allocated: float,
         counter: Counter) -> dict[str, Any]:
    """One lease of ``size`` nodes, started, ``allocated`` of its nodes
    allocated under it, and ended; timings (s) and the requests of each
    phase."""
    marks = [counter.snapshot()]
    # Far enough that no before_end event is due ([lease] before_end).
    end = time.time() + 2 * 86400
    site.arrive()
    response = site.client.post('/v1/leases', json={
        'project': 'bench', 'resource_class': 'bench', 'count': size,
        'end': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(end))})
    assert response.status_code == 201, response.json
    uuid = response.json['uuid']
    created = time.monotonic()
    marks.append(counter.snapshot())
    active, start_runs = site.until(
        uuid, lambda lease: lease.status == 'active')
    site.drained()
    pushed = time.monotonic()
    marks.append(counter.snapshot())
    _allocate(site, round(size * allocated))
    site.drained()
    marks.append(counter.snapshot())
    site.arrive()
    response = site.client.delete('/v1/leases/%s' % uuid)
    assert response.status_code == 204, response.json
    deleted = time.monotonic()
    ended, end_runs = site.until(uuid, lambda lease: lease.status == 'ended')
    marks.append(counter.snapshot())
    gone = ended
    if site.placed:
        site.drained()
        gone, _runs = site.until(uuid, lambda lease: not lease.placement_class)
    marks.append(counter.snapshot())
    return {'start': active - created, 'end': ended - deleted,
            'start_runs': start_runs, 'end_runs': end_runs,
            'inventory': pushed - created, 'class_gone': gone - deleted,
            'requests': {phase: marks[i + 1][0] - marks[i][0]
                         for i, phase in enumerate(_PHASES)},
            'seconds': {phase: marks[i + 1][1] - marks[i][1]
                        for i, phase in enumerate(_PHASES)}}


def _ms(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return round(ordered[index] * 1000, 1)


def _per_lease(runs: list[dict[str, Any]], phase: str
               ) -> dict[str, dict[str, float]]:
    total: collections.Counter[tuple[str, str]] = collections.Counter()
    for run in runs:
        total.update(run['requests'][phase])
    out: dict[str, dict[str, float]] = {}
    for (who, call), count in sorted(total.items()):
        out.setdefault(who, {})[call] = round(count / len(runs), 2)
    for calls in out.values():
        calls['total'] = round(sum(calls.values()), 2)
    return out


def _engine_ms(runs: list[dict[str, Any]], phase: str
               ) -> dict[str, float]:
    """Median milliseconds the engine waited for each call, per lease."""
    calls = {call for run in runs for (who, call) in run['seconds'][phase]
             if who == 'engine'}
    return {call: round(statistics.median(
        run['seconds'][phase].get(('engine', call), 0.0) for run in runs)
        * 1000, 1) for call in sorted(calls)}


def _claims(requests: dict[str, dict[str, float]]) -> float:
    return sum(count for call, count in requests.get('engine', {}).items()
               if '/allocations' in call)


def _summary(placed: list[dict[str, Any]],
             plain: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ('start', 'end'):
        with_p = [run[kind] for run in placed]
        without = [run[kind] for run in plain]
        out[kind] = {
            'p50_ms': _ms(with_p, 0.5), 'p95_ms': _ms(with_p, 0.95),
            'plain_p50_ms': _ms(without, 0.5),
            'plain_p95_ms': _ms(without, 0.95),
            'p95_ratio': round(_ms(with_p, 0.95)
                               / max(_ms(without, 0.95), 0.1), 2),
            'engine_runs': max(run[kind + '_runs'] for run in placed),
            'plain_engine_runs': max(run[kind + '_runs'] for run in plain),
        }
    out['inventory_s'] = round(statistics.median(
        run['inventory'] for run in placed), 3)
    out['class_gone_s'] = round(statistics.median(
        run['class_gone'] for run in placed), 3)
    out['requests'] = {phase: _per_lease(placed, phase)
                       for phase in _PHASES}
    # The lease engine's own wait for Placement, per lease and call.
    out['engine_placement_ms'] = {phase: _engine_ms(placed, phase)
                                  for phase in ('start', 'end')}
    out['claim_requests'] = {
        phase: _claims(out['requests'][phase]) for phase in ('start', 'end')}
    return out


def _bare_claim(url: str, providers: list[str]) -> float:
    """Placement's own time for a start's claim: a bare client's ``POST
    /allocations`` of one new consumer on ``providers`` (released
    afterwards, not timed); seconds."""
    session = requests.Session()
    session.headers.update(placement_sync.HEADERS)
    consumer = str(uuidlib.uuid4())
    began = time.monotonic()
    response = session.post(url + '/allocations', json={consumer: {
        'allocations': {provider: {'resources': {'CUSTOM_BENCH': 1}}
                        for provider in providers},
        'consumer_generation': None, 'project_id': 'bench',
        'user_id': 'bench'}})
    took = time.monotonic() - began
    assert response.status_code == 204, response.text
    session.delete(url + '/allocations/' + consumer).raise_for_status()
    return took


def _idle_run_ms(site: Site, count: int = 20) -> float:
    """A run with nothing to do, once warm (statements compiled)."""
    engine.run(site.ctx)
    began = time.monotonic()
    for _ in range(count):
        engine.run(site.ctx)
    return round((time.monotonic() - began) / count * 1000, 2)


def measure(args: argparse.Namespace, urls: dict[str, str | None]
            ) -> dict[str, Any]:
    counter = Counter()
    counter.install()
    tmp = tempfile.mkdtemp(prefix='ferrum-bench-')
    proc, url = placement_sync._start_placement(
        os.path.join(tmp, 'placement'), urls.get('placement'), 1)
    sites: list[Site] = []
    try:
        placed = Site('placement', tmp, urls.get('with'), url,
                      args.allocation_backend, args.nodes,
                      args.check_interval)
        sites.append(placed)
        plain = Site('plain', tmp, urls.get('without'), None, '',
                     args.nodes, args.check_interval)
        sites.append(plain)
        result: dict[str, Any] = {
            'benchmark': 'leases_placement',
            'database': placed.db.engine.dialect.name,
            'placement_database': ('postgresql' if urls.get('placement')
                                   else 'sqlite'),
            'allocation_backend': args.allocation_backend,
            'allocated': args.allocated,
            'nodes': args.nodes, 'repetitions': args.repetitions,
            'engine': ('engine.run back to back'
                       if args.check_interval is None else
                       'periodic, [lease] check_interval = %s s'
                       % args.check_interval)}
        if args.check_interval is None:
            result['idle_run_ms'] = _idle_run_ms(placed)
            result['plain_idle_run_ms'] = _idle_run_ms(plain)
        providers = [node.uuid for node in node_obj.Node.list(placed.db)]
        for size in args.sizes:
            runs: dict[str, list[dict[str, Any]]] = {
                'placement': [], 'plain': []}
            bare = []
            for rep in range(args.repetitions):
                # Under the same load as the leases: one between them.
                bare.append(_bare_claim(url, providers[:size]))
                # Alternate which goes first: neither always runs warm.
                order = sites if rep % 2 == 0 else sites[::-1]
                for site in order:
                    runs[site.name].append(
                        _one(site, size, args.allocated, counter))
            result['lease_%d' % size] = _summary(
                runs['placement'], runs['plain'])
            result['lease_%d' % size]['bare_claim'] = {
                'p50_ms': _ms(bare, 0.5), 'p95_ms': _ms(bare, 0.95)}
    finally:
        for site in sites:
            site.close()
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    _verdicts(result, args.sizes)
    result['load_1min'] = round(os.getloadavg()[0], 2)
    return result


def _verdicts(result: dict[str, Any], sizes: list[int]) -> None:
    first, last = 'lease_%d' % min(sizes), 'lease_%d' % max(sizes)
    for kind in ('start', 'end'):
        result['claim_requests_%s' % kind] = {
            str(size): result['lease_%d' % size]['claim_requests'][kind]
            for size in sizes}
        result['o1_claims_%s' % kind] = (
            result[last]['claim_requests'][kind]
            <= result[first]['claim_requests'][kind])
        result['p95_ratio_%s_max' % kind] = max(
            result['lease_%d' % size][kind]['p95_ratio'] for size in sizes)
    result['latency_target'] = max(
        result['p95_ratio_start_max'], result['p95_ratio_end_max']) <= 2.0


@contextlib.contextmanager
def _databases(args: argparse.Namespace
               ) -> Iterator[dict[str, str | None]]:
    if not args.throwaway_postgres:
        yield {}
        return
    names = ['with', 'without'] + (['placement']
                                   if args.placement_on_postgres else [])
    with placement_sync._postgres(names) as urls:
        yield dict(urls)


def main(args: argparse.Namespace) -> int:
    with _databases(args) as urls:
        result = measure(args, urls)
    print(json.dumps(result))
    # As the other benchmarks: a failure is a wrong count, not a time
    # (latency_target reports the latency). The target is the start's.
    return 0 if result['o1_claims_start'] else 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group('--placement mode')
    group.add_argument('--repetitions', type=int, default=20,
                       help='leases of each size, with and without')
    group.add_argument('--sizes', type=int, nargs='+', default=list(SIZES))
    group.add_argument('--allocation-backend', default='placement',
                       choices=('placement', 'database'))
    group.add_argument('--placement-on-postgres', action='store_true',
                       help='with --throwaway-postgres: Placement too')
    group.add_argument('--allocated', type=float, default=0.0,
                       help='fraction of each lease\'s nodes allocated '
                            'under it (owner = the lessee) before its end')
    group.add_argument('--check-interval', type=float,
                       help='run the conductors\' periodic lease engine '
                            'at this [lease] check_interval and watch the '
                            'leases, instead of calling engine.run back to '
                            'back')


def nodes_needed(args: argparse.Namespace) -> int:
    return max(args.sizes) + 10

