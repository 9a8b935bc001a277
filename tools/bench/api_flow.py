#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: enroll fake nodes and make them available through the REST API.

Talks plain HTTP (``requests``) to any Ironic-compatible endpoint, e.g. the
one ``make run`` starts::

    make run &
    .venv/bin/python tools/bench/api_flow.py --url http://127.0.0.1:6385 \\
        --nodes 200 --concurrency 8

``--concurrency`` worker threads (one HTTP session each) share the
``--nodes`` nodes. Each worker takes its nodes one by one from enroll to
available: ``POST /v1/nodes`` (driver ``fake-hardware``), ``PUT .../traits``,
``PUT .../states/power`` to power off, then ``PUT .../states/provision``
``manage`` and ``provide``, polling ``GET /v1/nodes/{uuid}`` every
``--poll-interval`` seconds until each change is done. Once every worker is
done, the workers delete their nodes (maintenance on, then ``DELETE``: two
calls, where "manage, wait, delete" takes more).

Prints one JSON line:

* ``nodes_per_s``: nodes divided by the time from the first enroll to the
  last node available;
* ``delete_s``: wall time of the delete phase;
* ``http_requests``, ``http_5xx``, ``http_errors`` (any non-2xx answer,
  including 409 "node locked" answers that were retried);
* ``get_node_p50_s``, ``get_node_p95_s``: latency of the polls;
* ``failures``: nodes that did not reach available, and ``first_failure``,
  why the first of them failed; ``delete_failures`` and
  ``first_delete_failure`` the same for deleting. The exit status is 1 when
  either count is not 0.
"""

import argparse
import json
import sys
import threading
import time
from typing import Any

import requests

_DRIVER = 'fake-hardware'
_TRAITS = ['CUSTOM_BENCH', 'HW_CPU_X86_VMX']
_RESOURCE_CLASS = 'bench'
#: Target state -> where the node ends up when it cannot get there: a
#: failed verification goes back to enroll, a failed cleaning stops.
_FAILED = {'manageable': 'enroll', 'available': 'clean failed'}


class Failed(Exception):
    """One node did not reach the state it should have."""


class Stats:
    """HTTP counters and poll latencies, shared by the workers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = 0
        self.server_errors = 0
        self.errors = 0
        self.get_latencies: list[float] = []
        self.failures: list[str] = []
        self.delete_failures: list[str] = []
        self.last_available = 0.0

    def record(self, status: int, get_latency: float | None) -> None:
        with self._lock:
            self.requests += 1
            if status >= 500:
                self.server_errors += 1
            if not 200 <= status < 300:
                self.errors += 1
            if get_latency is not None:
                self.get_latencies.append(get_latency)

    def fail(self, reason: str, deleting: bool = False) -> None:
        with self._lock:
            (self.delete_failures if deleting else self.failures).append(
                reason)

    def available(self) -> None:
        with self._lock:
            self.last_available = max(self.last_available, time.monotonic())


class Worker:
    """One thread's HTTP session and its share of the nodes."""

    def __init__(self, args: argparse.Namespace, stats: Stats) -> None:
        self.url = args.url.rstrip('/')
        self.timeout = args.timeout
        self.poll_interval = args.poll_interval
        self.stats = stats
        self.session = requests.Session()
        self.session.headers.update({
            'X-OpenStack-Ironic-API-Version': args.api_version,
            'Accept': 'application/json'})
        if args.token:
            # One token for the whole run, as a client reuses its own.
            self.session.headers['X-Auth-Token'] = args.token
        self.uuids: list[str] = []

    def call(self, method: str, path: str, body: Any = None,
             expect: int = 200) -> requests.Response:
        """One API call; a "node locked" 409 or a 503 is retried."""
        deadline = time.monotonic() + self.timeout
        while True:
            start = time.monotonic()
            response = self.session.request(method, self.url + path,
                                            json=body, timeout=60)
            latency = time.monotonic() - start
            self.stats.record(response.status_code,
                              latency if method == 'GET' else None)
            if response.status_code == expect:
                return response
            retry = response.status_code == 503 or (
                response.status_code == 409
                and 'lock' in response.text.lower())
            if not retry or time.monotonic() > deadline:
                raise Failed('%s %s answered %d: %s' % (
                    method, path, response.status_code, response.text[:300]))
            time.sleep(self.poll_interval)

    def wait(self, uuid: str, done: Any, what: str,
             failed: Any = None) -> None:
        """Poll the node until ``done(node)``; give up on ``failed(node)``."""
        deadline = time.monotonic() + self.timeout
        while True:
            node = self.call('GET', '/v1/nodes/%s' % uuid).json()
            if done(node):
                return
            if failed is not None and failed(node):
                raise Failed('node %s failed to become %s: provision_state '
                             '%s, last_error %s' % (
                                 uuid, what, node.get('provision_state'),
                                 node.get('last_error')))
            if time.monotonic() > deadline:
                raise Failed('node %s did not become %s within %.0fs: '
                             'provision_state %s, power_state %s' % (
                                 uuid, what, self.timeout,
                                 node.get('provision_state'),
                                 node.get('power_state')))
            time.sleep(self.poll_interval)

    def provision(self, uuid: str, target: str, state: str) -> None:
        self.call('PUT', '/v1/nodes/%s/states/provision' % uuid,
                  {'target': target}, expect=202)

        def failed(node: dict[str, Any]) -> bool:
            return (node['provision_state'] == _FAILED[state]
                    and node.get('target_provision_state') is None
                    and bool(node.get('last_error')))

        self.wait(uuid, lambda node: node['provision_state'] == state
                  and node.get('target_provision_state') is None,
                  state, failed)

    def enroll_one(self) -> None:
        node = self.call('POST', '/v1/nodes', {
            'driver': _DRIVER, 'resource_class': _RESOURCE_CLASS},
            expect=201).json()
        uuid = node['uuid']
        self.uuids.append(uuid)
        self.call('PUT', '/v1/nodes/%s/traits' % uuid, {'traits': _TRAITS},
                  expect=204)
        self.call('PUT', '/v1/nodes/%s/states/power' % uuid,
                  {'target': 'power off'}, expect=202)
        self.wait(uuid, lambda node: node['power_state'] == 'power off'
                  and node.get('target_power_state') is None, 'power off')
        self.provision(uuid, 'manage', 'manageable')
        self.provision(uuid, 'provide', 'available')
        self.stats.available()

    def enroll(self, count: int) -> None:
        for _ in range(count):
            try:
                self.enroll_one()
            except (Failed, requests.RequestException) as exc:
                self.stats.fail(str(exc))

    def delete(self) -> None:
        for uuid in self.uuids:
            try:
                self.call('PUT', '/v1/nodes/%s/maintenance' % uuid,
                          {'reason': 'benchmark clean-up'}, expect=202)
                self.call('DELETE', '/v1/nodes/%s' % uuid, expect=204)
            except (Failed, requests.RequestException) as exc:
                self.stats.fail(str(exc), deleting=True)


def _run(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _percentile(values: list[float], fraction: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return round(ordered[index], 4)


def parse_args(doc: str | None, poll_interval: float) -> argparse.Namespace:
    """The options every API benchmark takes (also used by allocations.py)."""
    parser = argparse.ArgumentParser(
        description=(doc or '').splitlines()[0])
    parser.add_argument('--url', default='http://127.0.0.1:6385',
                        help='the API endpoint (default: %(default)s)')
    parser.add_argument('--nodes', type=int, default=200)
    parser.add_argument('--concurrency', type=int, default=8)
    parser.add_argument('--api-version', default='1.65',
                        help='X-OpenStack-Ironic-API-Version to send')
    parser.add_argument('--poll-interval', type=float, default=poll_interval,
                        help='seconds between two polls of a resource')
    parser.add_argument('--token', default='',
                        help='a Keystone token sent as X-Auth-Token with '
                             'every request (empty: none, for noauth)')
    parser.add_argument('--timeout', type=float, default=120.0,
                        help='seconds one change may take, retries included')
    args = parser.parse_args()
    if args.nodes < 1 or args.concurrency < 1:
        parser.error('--nodes and --concurrency must be 1 or more')
    return args


def main() -> int:
    args = parse_args(__doc__, poll_interval=0.015)

    stats = Stats()
    workers = [Worker(args, stats) for _ in range(args.concurrency)]
    shares = [args.nodes // args.concurrency
              + (1 if i < args.nodes % args.concurrency else 0)
              for i in range(args.concurrency)]
    start = time.monotonic()
    _run([threading.Thread(target=worker.enroll, args=(share,))
          for worker, share in zip(workers, shares, strict=True)])
    end = stats.last_available or time.monotonic()
    delete_start = time.monotonic()
    _run([threading.Thread(target=worker.delete) for worker in workers])
    delete_s = time.monotonic() - delete_start

    available = args.nodes - len(stats.failures)
    print(json.dumps({
        'benchmark': 'api_flow', 'url': args.url,
        'api_version': args.api_version, 'nodes': args.nodes,
        'concurrency': args.concurrency,
        'nodes_per_s': round(available / (end - start), 1),
        'enroll_to_available_s': round(end - start, 2),
        'delete_s': round(delete_s, 2),
        'http_requests': stats.requests, 'http_5xx': stats.server_errors,
        'http_errors': stats.errors,
        'get_node_p50_s': _percentile(stats.get_latencies, 0.50),
        'get_node_p95_s': _percentile(stats.get_latencies, 0.95),
        'failures': len(stats.failures),
        'first_failure': stats.failures[0] if stats.failures else None,
        'delete_failures': len(stats.delete_failures),
        'first_delete_failure': (stats.delete_failures[0]
                                 if stats.delete_failures else None)}))
    return 1 if stats.failures or stats.delete_failures else 0


if __name__ == '__main__':
    sys.exit(main())
