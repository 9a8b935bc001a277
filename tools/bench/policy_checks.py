#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: what the policy checks of one API request cost.

The API's own code with the real rules (``ferrum.api.policy``: the
Enforcer with Ironic's defaults and the Authorizer that remembers
decisions), evaluated for the checks each kind of request makes, as
``ferrum.api.access`` makes them, with real oslo.context credentials of
each persona (system admin, owner member, lessee member, third-party
member)::

    .venv/bin/python tools/bench/policy_checks.py --requests 2000

A request's policy work is: the policy file's check (its mtime, at most
once a second: ``Enforcer.check_file``), the caller's credentials
(``to_policy_values``, frozen once as a ``Caller``), then its checks:

* ``node_get``: ``baremetal:node:get`` (404 unless allowed), the action's
  rule, and the redaction rules past ``filter_threshold``;
* ``node_power``: ``get`` then ``set_power_state``;
* ``node_list``: ``list_all`` (else ``list``), then the redaction rules for
  each owner/lessee pair of a page of ``--page`` nodes over ``--pairs``
  distinct pairs;
* ``allocation_create``: ``create`` and ``create_restricted``.

``warm`` is the server's steady state (one Authorizer for every request:
decisions come from its memory); ``cold`` makes it forget every
decision before each request, so every check is evaluated by oslo.policy,
the cost of the first request of a caller on a target. Prints one JSON
line per mode with p50, p95 and max per request in milliseconds, over
every persona and request kind.
"""

import argparse
import functools
import json
import time
from collections.abc import Callable

from oslo_context import context as context_mod

from ferrum import conf as ferrum_conf
from ferrum.api import authorizer as authorizer_mod
from ferrum.api import policy
from ferrum.api.views import node as node_view

OWNER = 'a' * 32
LESSEE = 'b' * 32
THIRD = 'c' * 32
PERSONAS = {
    'system-admin': dict(roles=['admin', 'manager', 'member', 'reader'],
                         system_scope='all'),
    'owner-member': dict(roles=['member', 'reader'], project_id=OWNER),
    'lessee-member': dict(roles=['member', 'reader'], project_id=LESSEE),
    'third-member': dict(roles=['member', 'reader'], project_id=THIRD),
}
NODE = {'node.owner': OWNER, 'node.lessee': LESSEE}

Check = Callable[[str, dict[str, str]], bool]


def _redactions(allowed: Check, target: dict[str, str]) -> None:
    if not allowed('baremetal:node:get:filter_threshold', {}):
        for field in node_view.REDACTED:
            allowed('baremetal:node:get:%s' % field, target)


def node_get(allowed: Check, _page: list[dict[str, str]]) -> None:
    if allowed('baremetal:node:get', NODE):
        _redactions(allowed, NODE)


def node_power(allowed: Check, _page: list[dict[str, str]]) -> None:
    if allowed('baremetal:node:get', NODE):
        allowed('baremetal:node:set_power_state', NODE)


def node_list(allowed: Check, page: list[dict[str, str]]) -> None:
    if not allowed('baremetal:node:list_all', {}):
        allowed('baremetal:node:list', {})
    seen: set[tuple[str, ...]] = set()
    for target in page:
        pair = tuple(sorted(target.values()))
        if pair not in seen:  # access.node_redactions decides per pair
            seen.add(pair)
            _redactions(allowed, target)


def allocation_create(allocation_allowed: Check,
                      _page: list[dict[str, str]]) -> None:
    allocation_allowed('baremetal:allocation:create', {})
    allocation_allowed('baremetal:allocation:create_restricted', {})


REQUESTS = [node_get, node_power, node_list, allocation_create]


def _allowed(authorizer: authorizer_mod.Authorizer,
             caller: authorizer_mod.Caller, rule: str,
             target: dict[str, str]) -> bool:
    return authorizer.allowed(rule, target, caller)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))
    return round(ordered[index] * 1000, 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--requests', type=int, default=2000,
                        help='requests per mode (default: %(default)s)')
    parser.add_argument('--page', type=int, default=100,
                        help='nodes on a node_list page')
    parser.add_argument('--pairs', type=int, default=5,
                        help='distinct owner/lessee pairs on that page')
    args = parser.parse_args()
    conf = ferrum_conf.new_conf()
    enforcer = policy.enforcer(conf)
    page = [{'node.owner': OWNER, 'node.lessee': '%032x' % (i % args.pairs)}
            for i in range(args.page)]
    shared = authorizer_mod.Authorizer(enforcer)
    for mode in ('warm', 'cold'):
        timings: list[float] = []
        for index in range(args.requests):
            persona = list(PERSONAS)[index % len(PERSONAS)]
            request = REQUESTS[(index // len(PERSONAS)) % len(REQUESTS)]
            if mode == 'cold':
                # Nothing remembered: every check of this request is
                # evaluated (the rule set itself is the server's, read
                # and examined once).
                shared.forget()
            start = time.perf_counter()
            authorizer = shared
            authorizer.refresh()
            caller = authorizer_mod.Caller(context_mod.RequestContext(
                **PERSONAS[persona]).to_policy_values())
            request(functools.partial(_allowed, authorizer, caller), page)
            timings.append(time.perf_counter() - start)
        print(json.dumps({
            'benchmark': 'policy_checks', 'mode': mode,
            'requests': args.requests, 'page': args.page,
            'pairs': args.pairs,
            'p50_ms': _percentile(timings, 0.50),
            'p95_ms': _percentile(timings, 0.95),
            'max_ms': _percentile(timings, 1.0)}), flush=True)


if __name__ == '__main__':
    main()
