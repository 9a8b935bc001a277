#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: allocate every node of a fleet through the REST API, then free
them.

Talks plain HTTP (``requests``) to any Ironic-compatible endpoint (API 1.52
or later), e.g. the one ``make run`` starts::

    make run &
    .venv/bin/python tools/bench/allocations.py --url http://127.0.0.1:6385 \\
        --nodes 1000 --concurrency 8

1. Enrolls ``--nodes`` fake-hardware nodes of resource class ``bench`` with
   traits and makes them available, as ``api_flow.py`` does (not timed).
2. Allocates them: ``--concurrency`` threads (one HTTP session each) send
   ``POST /v1/allocations`` (resource class ``bench``, trait
   ``CUSTOM_BENCH``) until there is one allocation per node, polling
   ``GET /v1/allocations/{uuid}`` every ``--poll-interval`` seconds while
   an allocation is ``allocating``.
3. Lists every allocation and every node and checks that no node is held
   by two allocations and that each node points back at its allocation.
4. Deletes the allocations with the same threads, taking them from one
   shared queue (``DELETE /v1/allocations/{uuid}``), then the nodes (not
   timed).

Prints one JSON line:

* ``allocs_per_s``: allocations that reached ``active``, divided by the
  time from the first POST to the last one done;
* ``p50_latency_s``, ``p95_latency_s``: from POST to ``active`` (or
  ``error``), polls included;
* ``errors``: allocations that ended in ``error`` or were refused, and
  ``first_error``; ``http_5xx``;
* ``polls``: GETs needed because a POST answered ``allocating``;
* ``double_allocated``: nodes held by more than one allocation (and
  ``inconsistent``: nodes whose ``allocation_uuid`` does not match);
* ``deletes_per_s``.

The exit status is 1 unless every allocation succeeded, nothing was
double allocated and every delete worked.
"""

import argparse
import itertools
import json
import os
import sys
import threading
import time
from typing import Any

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_flow  # noqa: E402  (the enrolment half is shared)

_TRAIT = 'CUSTOM_BENCH'


class Allocator:
    """One thread's session: allocations made, their latencies, errors."""

    def __init__(self, args: argparse.Namespace, stats: api_flow.Stats
                 ) -> None:
        self.worker = api_flow.Worker(args, stats)
        self.poll_interval = args.poll_interval
        self.made: list[str] = []
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.polls = 0
        self.deleted = 0

    def allocate(self, budget: 'itertools.count[int]', total: int) -> None:
        while next(budget) < total:
            start = time.monotonic()
            try:
                state, detail = self._allocate_one()
            except (api_flow.Failed, requests.RequestException) as exc:
                state, detail = 'refused', str(exc)
            self.latencies.append(time.monotonic() - start)
            if state != 'active':
                self.errors.append('%s: %s' % (state, detail))

    def _allocate_one(self) -> tuple[str, str]:
        allocation = self.worker.call('POST', '/v1/allocations', {
            'resource_class': api_flow._RESOURCE_CLASS,
            'traits': [_TRAIT]}, expect=201).json()
        self.made.append(allocation['uuid'])
        while allocation['state'] == 'allocating':
            time.sleep(self.poll_interval)
            self.polls += 1
            allocation = self.worker.call(
                'GET', '/v1/allocations/%s' % allocation['uuid']).json()
        return allocation['state'], str(allocation.get('last_error'))

    def delete(self, queue: list[str], lock: threading.Lock) -> None:
        """Delete allocations from the shared ``queue`` until it is empty.

        Shared, so that every thread stays busy to the end of the phase.
        """
        while True:
            with lock:
                if not queue:
                    return
                uuid = queue.pop()
            try:
                self.worker.call('DELETE', '/v1/allocations/%s' % uuid,
                                 expect=204)
                self.deleted += 1
            except (api_flow.Failed, requests.RequestException) as exc:
                self.errors.append('delete: %s' % exc)


def _list_all(worker: api_flow.Worker, path: str, key: str,
              fields: str) -> list[dict[str, Any]]:
    """Every item of a collection, following ``next`` links."""
    items: list[dict[str, Any]] = []
    url = '%s?fields=%s&limit=1000' % (path, fields)
    while url:
        page = worker.call('GET', url).json()
        items += page[key]
        url = page.get('next', '').replace(worker.url, '') or ''
    return items


def _check(worker: api_flow.Worker) -> tuple[int, int]:
    """(nodes held by several allocations, nodes pointing elsewhere)."""
    allocations = _list_all(worker, '/v1/allocations', 'allocations',
                            'uuid,node_uuid,state')
    holders: dict[str, list[str]] = {}
    for allocation in allocations:
        if allocation['node_uuid']:
            holders.setdefault(allocation['node_uuid'], []).append(
                allocation['uuid'])
    double = sum(1 for held in holders.values() if len(held) > 1)
    nodes = _list_all(worker, '/v1/nodes', 'nodes',
                      'uuid,allocation_uuid,instance_uuid')
    inconsistent = 0
    for node in nodes:
        held = holders.get(node['uuid'], [])
        expected = held[0] if len(held) == 1 else None
        if (node['allocation_uuid'] != expected
                or (expected and node['instance_uuid'] != expected)):
            inconsistent += 1
    return double, inconsistent


def _run(threads: list[threading.Thread]) -> float:
    start = time.monotonic()
    api_flow._run(threads)
    return time.monotonic() - start


def main() -> int:
    args = api_flow.parse_args(__doc__, poll_interval=0.01)

    stats = api_flow.Stats()
    enrollers = [api_flow.Worker(args, stats)
                 for _ in range(args.concurrency)]
    shares = [args.nodes // args.concurrency
              + (1 if i < args.nodes % args.concurrency else 0)
              for i in range(args.concurrency)]
    api_flow._run([threading.Thread(target=w.enroll, args=(share,))
                   for w, share in zip(enrollers, shares, strict=True)])
    if stats.failures:
        print(json.dumps({'benchmark': 'allocations', 'setup_failures':
                          len(stats.failures), 'first': stats.failures[0]}))
        return 1

    allocators = [Allocator(args, stats) for _ in range(args.concurrency)]
    budget = itertools.count()
    allocate_s = _run([threading.Thread(target=a.allocate,
                                        args=(budget, args.nodes))
                       for a in allocators])
    double, inconsistent = _check(allocators[0].worker)
    queue = [uuid for a in allocators for uuid in a.made]
    lock = threading.Lock()
    delete_s = _run([threading.Thread(target=a.delete, args=(queue, lock))
                     for a in allocators])
    api_flow._run([threading.Thread(target=w.delete) for w in enrollers])

    latencies = [x for a in allocators for x in a.latencies]
    errors = [e for a in allocators for e in a.errors]
    active = len(latencies) - sum(1 for e in errors
                                  if not e.startswith('delete'))
    deleted = sum(a.deleted for a in allocators)
    print(json.dumps({
        'benchmark': 'allocations', 'url': args.url, 'nodes': args.nodes,
        'concurrency': args.concurrency,
        'allocs_per_s': round(active / allocate_s, 1),
        'allocate_s': round(allocate_s, 2),
        'p50_latency_s': api_flow._percentile(latencies, 0.50),
        'p95_latency_s': api_flow._percentile(latencies, 0.95),
        'errors': len(errors), 'first_error': errors[0] if errors else None,
        'http_5xx': stats.server_errors,
        'polls': sum(a.polls for a in allocators),
        'double_allocated': double, 'inconsistent': inconsistent,
        'deletes_per_s': round(deleted / delete_s, 1),
        'node_delete_failures': len(stats.delete_failures)}))
    return 1 if errors or double or inconsistent else 0


if __name__ == '__main__':
    sys.exit(main())
