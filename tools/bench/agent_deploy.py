#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: ``direct`` deploys with the real ironic-python-agent.

``--nodes`` agent test machines (tests/agent: a loop disk each, the agent
in namespaces behind the three guards; root needed) are enrolled in an
all-in-one ``ferrum`` with the default heartbeat settings
(``[api] ramdisk_heartbeat_timeout = 300``), made available without
cleaning, and deployed at once: a raw image, then (after an undeploy) its
qcow2 copy. For each node it measures:

* ``request_to_active_s``: from the deploy request to ``active``, as the
  API shows it (polled every 20 ms);
* ``agent_s``: the time the agent itself spent in the commands of that
  deploy, from its own log (each command's start to its completion: the
  steps listing, the write, the sync);
* ``overhead_s``: the first minus the second, as issue 40 defines it:
  everything but the agent's commands, which includes the machine's
  power-on and the agent's own boot;
* of it, from the node's history: ``power_on_s`` (the ``deploy.deploy``
  step, until the power interface has booted the machine: here the
  sandbox set up with its guards), ``agent_boot_s`` (from then to the
  agent's first heartbeat with its token: the agent starting, looking the
  node up), and ``ferrum_s``, the rest: ferrum's own share (the API, the
  steps around the write, noticing each command's end).

The machines stand by before each deploy (``agent_test_driver.sandbox.
stand_by``): off, with the guards up and the agent loaded, as a machine
whose firmware takes no time; the power on presses the button, and
``agent_boot_s`` is the agent's own start. ``--cold`` starts each sandbox
at the power on instead (its guards, an interpreter and the agent's
imports inside ``power_on_s``), as the functional tests do.

Prints one JSON line per image format with p50, p95 and max of each.
Run with ``.venv/bin/python tools/bench/agent_deploy.py`` (``make test``
builds the agent's virtualenv first).
"""

import argparse
import contextlib
import datetime
import json
import pathlib
import re
import statistics
import sys
import tempfile
import threading
import time
from typing import Any

_CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(_CHECKOUT))

from agent_test_driver import sandbox  # noqa: E402

from tests.agent import images as images_mod  # noqa: E402
from tests.functional.agent import nodes  # noqa: E402
from tests.functional.agent.ferrum_process import Ferrum  # noqa: E402

#: IPA's log lines (oslo.log) that open and close one command.
_LINE = re.compile(r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) .*?'
                   r'(Executing command: (\S+)|Asynchronous command (\S+) '
                   r'started execution|(?:Asynchronous|Synchronous) command '
                   r'(\S+) completed)')


def agent_seconds(log: str, since: float,
                  until: float = float('inf')) -> float:
    """Seconds the agent spent in commands started between ``since`` and
    ``until`` (epoch): each from its start to its completion, in the
    agent's log."""
    started: dict[str, float] = {}
    spans: list[tuple[float, float]] = []
    for line in log.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        when = datetime.datetime.strptime(
            match.group(1), '%Y-%m-%d %H:%M:%S.%f').timestamp()
        if when < since or when > until:
            continue
        name = match.group(3) or match.group(4)
        if name is not None:
            started.setdefault(name.split('.')[-1], when)
            continue
        begun = started.pop(match.group(5).split('.')[-1], None)
        if begun is not None:
            spans.append((begun, when))
    # Commands nest (execute_deploy_step runs prepare_image): count the
    # time covered, once.
    total, reached = 0.0, float('-inf')
    for begun, ended in sorted(spans):
        begun = max(begun, reached)
        if ended > begun:
            total += ended - begun
            reached = ended
    return total


#: Seconds a deploy of every node may take: far more than one needs.
DEADLINE = 180


def _when(entry: dict[str, Any]) -> float:
    return datetime.datetime.fromisoformat(entry['created_at']).timestamp()


def boot_phases(ferrum: Ferrum, uuid: str, since: float
                ) -> tuple[float, float, float]:
    """The times the node's deploy since ``since`` started its first
    step, waited for its agent, and had it: from its history."""
    response = ferrum.api('GET', '/v1/nodes/%s/history?detail=true' % uuid)
    entries = [entry for entry in response.json()['history']
               if _when(entry) >= since]
    started = next(_when(e) for e in entries
                   if e['event'] == 'Deploy step deploy.deploy started')
    waiting = next(_when(e) for e in entries if _when(e) >= started
                   and e['event'].startswith('Provision state deploying -> '
                                             'wait call-back'))
    resumed = next(_when(e) for e in entries if _when(e) >= waiting
                   and e['event'].startswith('Provision state wait '
                                             'call-back -> deploying'))
    return started, waiting, resumed


def _summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {'p50': round(statistics.median(ordered), 2),
            'p95': round(p95, 2), 'max': round(ordered[-1], 2)}


def _deploy_all(ferrum: Ferrum, machines: list[Any], made: Any,
                served: Any, name: str) -> dict[str, Any]:
    for _box, node in machines:
        response = ferrum.api('PATCH', '/v1/nodes/%s' % node['uuid'], json=[
            {'op': 'add', 'path': '/instance_info/%s' % key, 'value': value}
            for key, value in nodes.image_info(made, served, name).items()])
        assert response.status_code == 200, response.text
    since = time.time()
    requested = {}
    for _box, node in machines:
        requested[node['uuid']] = time.monotonic()
        ferrum.provision(node['uuid'], 'active')
    took: dict[str, float] = {}
    deadline = time.monotonic() + DEADLINE
    while len(took) < len(machines) and time.monotonic() < deadline:
        for _box, node in machines:
            uuid = node['uuid']
            if uuid in took:
                continue
            state = ferrum.node(uuid)
            if state['provision_state'] == 'active':
                took[uuid] = time.monotonic() - requested[uuid]
            elif state['provision_state'] == 'deploy failed':
                raise SystemExit('node %s: %s; its agent log ends:\n%s' % (
                    uuid, state['last_error'], _box.agent_log()[-6000:]))
        time.sleep(0.02)
    stuck = [(box, node) for box, node in machines if node['uuid'] not in took]
    if stuck:
        raise SystemExit('\n'.join(
            'node %s still %s after %d s; its agent log ends:\n%s' % (
                node['uuid'], ferrum.node(node['uuid'])['provision_state'],
                DEADLINE, box.agent_log()[-3000:])
            for box, node in stuck))
    agent = {node['uuid']: agent_seconds(box.agent_log(), since)
             for box, node in machines}
    phases = {}
    for box, node in machines:
        started, waiting, resumed = boot_phases(ferrum, node['uuid'], since)
        # The agent's commands while it boots (its steps listing) are in
        # agent_s already: only the rest of the wait is its boot.
        listing = agent_seconds(box.agent_log(), waiting, resumed)
        phases[node['uuid']] = (waiting - started,
                                resumed - waiting - listing)
    overhead = {uuid: took[uuid] - agent[uuid] for uuid in took}
    return {'image': name.split('.')[-1], 'size_mib': made.size // 2 ** 20,
            'request_to_active_s': _summary(list(took.values())),
            'agent_s': _summary(list(agent.values())),
            'overhead_s': _summary(list(overhead.values())),
            'power_on_s': _summary([p[0] for p in phases.values()]),
            'agent_boot_s': _summary([p[1] for p in phases.values()]),
            'ferrum_s': _summary([overhead[uuid] - sum(phases[uuid])
                                  for uuid in took])}


def _stand_by(machines: list[Any]) -> None:
    """Every machine on standby (at once: each takes seconds)."""
    failures: list[BaseException] = []

    def one(box: Any) -> None:
        try:
            sandbox.stand_by(box.spec)
        except sandbox.SandboxError as exc:
            failures.append(exc)

    threads = [threading.Thread(target=one, args=(box,))
               for box, _node in machines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit('a machine did not stand by: %s' % failures[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--nodes', type=int, default=4)
    parser.add_argument('--size-mib', type=int, default=32,
                        help='the image\'s size')
    parser.add_argument('--cold', action='store_true',
                        help='no standby: each power on starts a sandbox')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix='ferrum-bench-') as tmp, \
            contextlib.ExitStack() as stack:
        folder = pathlib.Path(tmp)
        made = images_mod.make_images(str(folder / 'images'), args.size_mib)
        served = stack.enter_context(
            images_mod.ImageServer(str(folder / 'images')))
        ferrum = Ferrum(folder, nodes.ferrum_conf(
            conductor={'deploy_callback_timeout': '600'}))
        ferrum.start()
        stack.callback(ferrum.stop)
        machines = [stack.enter_context(nodes.enrolled(
            ferrum, served, standby=not args.cold))
            for _ in range(args.nodes)]
        for _box, node in machines:
            ferrum.api('PATCH', '/v1/nodes/%s' % node['uuid'], json=[
                {'op': 'replace', 'path': '/automated_clean', 'value': False}])
            ferrum.provision(node['uuid'], 'provide')
        for _box, node in machines:
            ferrum.wait_state(node['uuid'], 'available')
        for name in ('disk.raw', 'disk.qcow2'):
            if not args.cold:
                _stand_by(machines)
            result = _deploy_all(ferrum, machines, made, served, name)
            print(json.dumps(dict({'benchmark': 'agent_deploy',
                                   'nodes': args.nodes,
                                   'boot': 'cold' if args.cold else 'standby',
                                   'heartbeat_timeout': 300}, **result)),
                  flush=True)
            for _box, node in machines:
                ferrum.provision(node['uuid'], 'deleted')
            for _box, node in machines:
                ferrum.wait_state(node['uuid'], 'available')


if __name__ == '__main__':
    main()
