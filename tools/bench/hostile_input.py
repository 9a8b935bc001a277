#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: the API's memory under 10,000 hostile requests, twice.

Starts ``ferrum-api`` (its conductor in-process, SQLite, fake hardware)
on loopback, or takes ``--url`` and ``--pid`` of one already running,
enrolls a few nodes and warms it up with ordinary requests. Then it sends
``--requests`` hostile requests from ``--concurrency`` threads, and the
same again, and prints one JSON line: the server's RSS before
(``rss_before_mb``), after the first round (``rss_after_mb``) and after the
repeat (``rss_after_repeat_mb``), answers by status, and how many were 5xx.

The hostile requests mix the categories an attacker or a broken client
sends: bodies nested thousands deep, bodies over the size limit (up to
10 MB, sent whole; the server refuses them from Content-Length and closes
the connection), a candidate list of 200,000 names (2.4 MB) and of 1,000
unknown names (under every limit: the database is asked), UTF-16 and
UTF-32 bodies, wrong media types, malformed version headers, absurd
numbers, long and many query parameters, ``//`` paths, broken JSON, and
(issue 27) the request scanner's worst cases up to the size limit:
unterminated strings, long escape runs ending on a lone backslash, quotes
and brackets in every mix, and the bodies valid JSON to their last byte
that the parser would build up to 350,000 values from, were they not
refused first by ``[api] max_json_body_values``
(tools/bench/request_scanner.py lists them all).
It also prints the slowest request (``slowest_seconds``, its category),
how many took longer than a second (``over_1s``), and the machine's load
when the rounds started and ended (``load_1min_start``, ``_end``).

Targets (issue 16): growth at most 20 MB, no further growth on the
repeat, zero 5xx. Issue 27: no request slower than 1 s.
"""

import argparse
import collections
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import all_in_one_rss  # noqa: E402  (the RSS reading is shared)
import request_scanner  # noqa: E402  (and the scanner's worst cases)

_BIN = os.path.dirname(sys.executable)
V = {'X-OpenStack-Ironic-API-Version': '1.65',
     'Content-Type': 'application/json'}
_MB = 1024 * 1024

Request = tuple[str, str, dict[str, str], bytes | None]
#: A request and the name of its category.
Named = tuple[str, Request]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def _ferrum_api() -> Iterator[tuple[str, int]]:
    """A ``ferrum-api`` of its own: (URL, pid)."""
    with tempfile.TemporaryDirectory(prefix='ferrum-hostile-') as tmp:
        port = _free_port()
        config = os.path.join(tmp, 'ferrum.conf')
        with open(config, 'w') as out:
            out.write('[DEFAULT]\nstate_path = %s\nlog_file = %s\n'
                      '[api]\nport = %d\n[conductor]\n'
                      'sync_power_state_interval = 0\n'
                      % (tmp, os.path.join(tmp, 'ferrum.log'), port))
        subprocess.run([os.path.join(_BIN, 'ferrum-dbsync'), '--config-file',
                        config, 'upgrade'], check=True)
        proc = subprocess.Popen([os.path.join(_BIN, 'ferrum-api'),
                                 '--config-file', config])
        url = 'http://127.0.0.1:%d' % port
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if requests.get(url + '/v1', timeout=5).ok:
                        break
                except requests.ConnectionError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit('ferrum-api did not start')
                time.sleep(0.1)
            yield url, proc.pid
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)


def _hostile(nodes: list[str]) -> list[tuple[int, Callable[[], Request]]]:
    """(weight, request factory) for each category."""
    rng = random.Random(16)

    def deep() -> Request:
        depth = rng.choice([26, 1000, 5000, 100000])
        path, method = rng.choice([('/v1/nodes', 'POST'),
                                   ('/v1/ports', 'POST'),
                                   ('/v1/allocations', 'POST'),
                                   ('/v1/nodes/%s' % rng.choice(nodes),
                                    'PATCH')])
        return method, path, V, b'[' * depth + b']' * depth

    def huge() -> Request:
        size = rng.choice([int(1.1 * _MB), 3 * _MB, 10 * _MB])
        return 'POST', '/v1/nodes', V, (
            b'{"driver": "' + b'x' * size + b'"}')

    def many_candidates() -> Request:
        count = rng.choice([1001, 200000])
        names = ['n-%d-%d' % (rng.randrange(10 ** 6), i)
                 for i in range(count)]
        return 'POST', '/v1/allocations', V, json.dumps(
            {'resource_class': 'x', 'candidate_nodes': names}).encode()

    def unknown_candidates() -> Request:
        # Under every bound: these reach the database.
        names = ['ghost-%d' % rng.randrange(10 ** 9)
                 for _ in range(rng.randrange(1, 1001))]
        return 'POST', '/v1/allocations', V, json.dumps(
            {'resource_class': 'x', 'candidate_nodes': names}).encode()

    def encoding() -> Request:
        text = json.dumps({'driver': 'fake-hardware',
                           'description': 'é' * rng.randrange(1, 5000)},
                          ensure_ascii=False)
        return 'POST', '/v1/nodes', V, text.encode(
            rng.choice(['utf-16', 'utf-32', 'utf-8-sig', 'latin-1']))

    def media_type() -> Request:
        return 'POST', '/v1/nodes', dict(V, **{'Content-Type': rng.choice(
            ['text/plain', 'application/xml', 'multipart/form-data'])}), (
            b'{"driver": "fake-hardware"}')

    def version() -> Request:
        header = rng.choice(['01.052', '1.+52', '1. 5', '99999999999.1',
                             '1.99999999999999', 'x' * 5000, '1.5.1'])
        return 'GET', '/v1/nodes', dict(
            V, **{'X-OpenStack-Ironic-API-Version': header}), None

    def numbers() -> Request:
        body = {'target': 'power on',
                'timeout': rng.choice([10 ** 30, -1, 2 ** 63, 1e308])}
        return ('PUT', '/v1/nodes/%s/states/power' % rng.choice(nodes), V,
                json.dumps(body).encode())

    def query() -> Request:
        if rng.random() < 0.5:
            return 'GET', '/v1/nodes?description_contains=' + (
                'q' * rng.choice([2000, 100000])), V, None
        return 'GET', '/v1/nodes?' + '&'.join(
            'k%d=v' % i for i in range(rng.choice([51, 5000]))), V, None

    def echo() -> Request:
        return 'POST', '/v1/nodes', V, json.dumps(
            {'driver': 'fake-hardware', 'name': 'n' * 900000}).encode()

    def broken() -> Request:
        return 'POST', '/v1/nodes', V, rng.choice(
            [b'{', b'{"a": NaN}', b'\xff\xfe{}', b'{"driver": 1e999}'])

    def double_slash() -> Request:
        return 'GET', '//v1/nodes', V, None

    # Up to the size limit (1 MiB), so every one is read and scanned.
    scanner_cases = {size: request_scanner.worst_cases(size)
                     for size in (1024, 64 * 1024, _MB)}

    def scanner() -> Request:
        cases = scanner_cases[rng.choice(sorted(scanner_cases))]
        path, method = rng.choice([('/v1/nodes', 'POST'),
                                   ('/v1/allocations', 'POST'),
                                   ('/v1/nodes/%s' % rng.choice(nodes),
                                    'PATCH')])
        return method, path, V, cases[rng.choice(sorted(cases))]

    return [(30, deep), (1, huge), (2, many_candidates),
            (10, unknown_candidates), (10, encoding), (5, media_type),
            (10, version), (10, numbers), (8, query), (2, echo),
            (10, broken), (2, double_slash), (10, scanner)]


def _send(url: str, session: requests.Session, request: Request) -> int:
    method, path, headers, body = request
    try:
        return session.request(method, url + path, headers=headers,
                               data=body, timeout=120).status_code
    except requests.ConnectionError:
        # The server answered 413 from Content-Length and closed the
        # connection while the client was still sending the body.
        session.close()
        return 0


def _round(url: str, requests_: list[Named], concurrency: int,
           times: list[tuple[str, float]]) -> collections.Counter[int]:
    """Answers by status; ``times`` gets (category, seconds) of each."""
    counts: collections.Counter[int] = collections.Counter()
    lock = threading.Lock()
    queue = list(requests_)

    def worker() -> None:
        session = requests.Session()
        while True:
            with lock:
                if not queue:
                    return
                name, request = queue.pop()
            started = time.monotonic()
            code = _send(url, session, request)
            took = time.monotonic() - started
            with lock:
                counts[code] += 1
                times.append((name, took))

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts


def _enroll(url: str, count: int) -> list[str]:
    uuids = []
    for _ in range(count):
        response = requests.post(url + '/v1/nodes', headers=V, timeout=60,
                                 json={'driver': 'fake-hardware'})
        response.raise_for_status()
        uuids.append(response.json()['uuid'])
    return uuids


def _warm_up(url: str, nodes: list[str]) -> None:
    session = requests.Session()
    for index in range(300):
        node = nodes[index % len(nodes)]
        session.get(url + '/v1/nodes/detail', headers=V, timeout=60)
        session.get(url + '/v1/nodes/' + node, headers=V, timeout=60)
        session.patch(url + '/v1/nodes/' + node, headers=V, timeout=60,
                      json=[{'op': 'add', 'path': '/extra/w',
                             'value': index}])
        session.post(url + '/v1/allocations', headers=V, timeout=60,
                     json={'resource_class': 'none'})


def _run(url: str, pid: int, count: int, concurrency: int) -> dict[str, Any]:
    nodes = _enroll(url, 20)
    _warm_up(url, nodes)
    weighted = _hostile(nodes)
    factories = [factory for weight, factory in weighted
                 for _ in range(weight)]
    rng = random.Random(1)

    def batch() -> list[Named]:
        return [(factory.__name__, factory())
                for factory in (rng.choice(factories) for _ in range(count))]

    times: list[tuple[str, float]] = []
    load_start = os.getloadavg()[0]
    before = all_in_one_rss.rss_mb(pid)
    started = time.monotonic()
    first = _round(url, batch(), concurrency, times)
    after = all_in_one_rss.rss_mb(pid)
    second = _round(url, batch(), concurrency, times)
    repeat = all_in_one_rss.rss_mb(pid)
    codes = first + second
    slowest: dict[str, float] = {}
    for name, took in times:
        slowest[name] = max(slowest.get(name, 0.0), took)
    worst = max(slowest, key=slowest.__getitem__)
    return {
        'benchmark': 'hostile_input', 'requests': count,
        'rounds': 2, 'concurrency': concurrency,
        'rss_before_mb': round(before, 1), 'rss_after_mb': round(after, 1),
        'rss_after_repeat_mb': round(repeat, 1),
        'growth_mb': round(after - before, 1),
        'repeat_growth_mb': round(repeat - after, 1),
        'http_5xx': sum(n for code, n in codes.items() if code >= 500),
        'closed_while_sending': codes.get(0, 0),
        'by_status': {str(code): n for code, n in sorted(codes.items())},
        'slowest_seconds': round(slowest[worst], 3),
        'slowest_category': worst,
        'over_1s': sum(1 for _name, took in times if took > 1.0),
        'slowest_by_category': {name: round(took, 3)
                                for name, took in sorted(slowest.items())},
        'seconds': round(time.monotonic() - started, 1),
        # Other processes delay the requests (over_1s), not the memory.
        'load_1min_start': round(load_start, 1),
        'load_1min_end': round(os.getloadavg()[0], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--url', help='a running ferrum-api (needs --pid)')
    parser.add_argument('--pid', type=int, help='its process id, for RSS')
    parser.add_argument('--requests', type=int, default=10000)
    parser.add_argument('--concurrency', type=int, default=8)
    args = parser.parse_args()
    if args.url:
        if not args.pid:
            parser.error('--url needs --pid')
        result = _run(args.url.rstrip('/'), args.pid, args.requests,
                      args.concurrency)
    else:
        with _ferrum_api() as (url, pid):
            result = _run(url, pid, args.requests, args.concurrency)
    print(json.dumps(result))
    return 0 if result['http_5xx'] == 0 and result['over_1s'] == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
