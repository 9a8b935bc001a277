#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark: one cycle of the three OneView periodic tasks over many nodes.

Starts ``tools/oneview_simulator/ovsim.py`` with ``--nodes`` server
hardware, enrolls one ``oneview`` node per server hardware in a conductor
running in this process (no HTTP API), and runs each dynamic-allocation
periodic task of ``ferrum.drivers.oneview.periodics`` once, counting the
REST requests the simulator received for each. The inventory:

* ``--taken`` available nodes whose hardware a OneView user took (the
  *taken* task moves them to maintenance and manageable); every other
  node not listed below is available on free hardware;
* ``--freed`` nodes the driver put in maintenance (manageable, reason and
  flag set); half of their hardware has been freed (the *freed* task
  provides those), the other half is still taken;
* ``--cleanfail`` nodes in ``clean failed`` because OneView had the
  hardware (the *clean failed* task moves them, reading only the database).

Automated cleaning is off, so a provided node goes straight to available
and the *freed* task's count is its own (cleaning would apply a profile per
node). Prints one JSON line: ``nodes``, ``page_size``,
``requests_per_task`` (task -> OneView requests, the first includes the
login), ``budget_per_task`` (ceil(nodes / page_size) + 2),
``seconds_per_task``, ``cycle_seconds`` (the three tasks, and the work they
spawned finished), ``changed`` / ``expected`` (nodes each task moved).
The exit status is 1 when a count is over budget, a task moved the wrong
number of nodes, or the cycle took over ``--max-cycle-seconds`` (5).

    .venv/bin/python tools/bench/oneview_periodics.py --nodes 5000
"""

import argparse
import json
import logging
import math
import pathlib
import sys
import tempfile
import time
from typing import Any

import sqlalchemy as sa

from ferrum import conf as ferrum_conf
from ferrum.common import states
from ferrum.conductor import service
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import periodics
from ferrum.objects import node as node_obj

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from tools.oneview_simulator import control  # noqa: E402

_TASKS = (('taken', periodics.check_nodes_taken_by_oneview),
          ('freed', periodics.check_nodes_freed_by_oneview),
          ('cleanfail', periodics.check_nodes_taken_on_cleanfail))


def _conductor(state_path: str, sim: control.OneViewSimulator,
               page_size: int) -> service.ConductorService:
    conf = ferrum_conf.new_conf()
    conf.set_override('state_path', state_path)
    conf.set_override('host', 'bench')
    conf.set_override('enabled_hardware_types', ['oneview'])
    for kind in ('power', 'management', 'deploy'):
        conf.set_override('enabled_%s_interfaces' % kind, ['oneview'])
    conf.set_override('automated_clean', False, 'conductor')
    for name, value in sim.ferrum_options().items():
        conf.set_override(name, value, 'oneview')
    conf.set_override('page_size', page_size, 'oneview')
    db = db_api.Database(conf)
    migration.upgrade(db.engine)
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    return svc


def _enroll(svc: service.ConductorService, sim: control.OneViewSimulator,
            uris: list[str]) -> list[int]:
    capabilities = ','.join([
        'server_hardware_type_uri:' + sim.server_hardware_type_uri,
        'server_profile_template_uri:' + sim.template_uri,
        'enclosure_group_uri:' + sim.enclosure_group_uri])
    assert svc.manager is not None
    return [svc.manager.create_node({
        'driver': 'oneview', 'name': 'ov-%d' % index,
        'driver_info': {'server_hardware_uri': uri},
        'properties': {'capabilities': capabilities}}).id
        for index, uri in enumerate(uris)]


def _set(db: db_api.Database, ids: list[int], **values: Any) -> None:
    table = node_obj.TABLE
    with db.writer() as conn:
        conn.execute(sa.update(table).where(table.c.id.in_(ids))
                     .values(**values))


def _scenario(svc: service.ConductorService, sim: control.OneViewSimulator,
              ids: list[int], uris: list[str], taken: int, freed: int,
              cleanfail: int) -> dict[str, tuple[list[int], int]]:
    """Put nodes in place; (node ids, nodes the task should move) by task."""
    assert svc.ctx is not None
    db = svc.ctx.db
    taken_ids = ids[:taken]
    freed_ids = ids[taken:taken + freed]
    failed_ids = ids[taken + freed:taken + freed + cleanfail]
    _set(db, ids, provision_state=states.AVAILABLE)
    for uri in uris[:taken + freed // 2] + uris[taken + freed:
                                                taken + freed + cleanfail]:
        sim.take(uri)
    _set(db, freed_ids, provision_state=states.MANAGEABLE, maintenance=True,
         maintenance_reason=allocation.MAINTENANCE_REASON,
         driver_internal_info={allocation.IN_USE_FLAG: True})
    _set(db, failed_ids, provision_state=states.CLEANFAIL,
         driver_internal_info={allocation.ALLOCATION_ERROR:
                               allocation.ALLOCATION_ERROR_VALUE})
    return {'taken': (taken_ids, taken),
            'freed': (freed_ids, freed - freed // 2),
            'cleanfail': (failed_ids, cleanfail)}


def _wait_idle(db: db_api.Database, ids: list[int],
               timeout: float = 120.0) -> None:
    """Until no node is locked or in a transient state (spawned work)."""
    deadline = time.monotonic() + timeout
    table = node_obj.TABLE
    while True:
        with db.reader() as conn:
            busy = conn.execute(sa.select(sa.func.count()).where(
                table.c.id.in_(ids), sa.or_(
                    table.c.reservation.is_not(None),
                    table.c.provision_state == states.CLEANING)
            )).scalar_one()
        if not busy:
            return
        if time.monotonic() > deadline:
            raise SystemExit('spawned work did not finish in %ss' % timeout)
        time.sleep(0.01)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--nodes', type=int, default=5000)
    parser.add_argument('--page-size', type=int, default=500,
                        help='[oneview] page_size, and the simulator\'s')
    parser.add_argument('--taken', type=int, default=50)
    parser.add_argument('--freed', type=int, default=50)
    parser.add_argument('--cleanfail', type=int, default=50)
    parser.add_argument('--max-cycle-seconds', type=float, default=5.0,
                        help='the cycle_seconds target')
    parser.add_argument('--verbose', action='store_true',
                        help='show ferrum\'s log (one line per node moved)')
    args = parser.parse_args()
    if not args.verbose:
        logging.getLogger('ferrum').setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        sim = control.OneViewSimulator(pathlib.Path(tmp) / 'ovsim',
                                       hardware=args.nodes,
                                       page_size=args.page_size)
        sim.start()
        try:
            uris = sim.hardware_uris()
            svc = _conductor(str(pathlib.Path(tmp) / 'state'), sim,
                             args.page_size)
            try:
                ids = _enroll(svc, sim, uris)
                plan = _scenario(svc, sim, ids, uris, args.taken,
                                 args.freed, args.cleanfail)
                result = _run(svc, sim, ids, plan)
            finally:
                svc.stop()
        finally:
            sim.stop()
    budget = math.ceil(args.nodes / args.page_size) + 2
    ok = (all(n <= budget for n in result['requests_per_task'].values())
          and result['changed'] == result['expected']
          and result['cycle_seconds'] <= args.max_cycle_seconds)
    print(json.dumps(dict(
        benchmark='oneview_periodics', nodes=args.nodes,
        page_size=args.page_size, budget_per_task=budget, **result,
        ok=ok)))
    return 0 if ok else 1


def _run(svc: service.ConductorService, sim: control.OneViewSimulator,
         ids: list[int], plan: dict[str, tuple[list[int], int]]
         ) -> dict[str, Any]:
    assert svc.ctx is not None
    requests, seconds, changed = {}, {}, {}
    cycle = 0.0
    for name, task in _TASKS:
        sim.reset_request_counts()
        started = time.perf_counter()
        changed[name] = task(svc.ctx)
        seconds[name] = round(time.perf_counter() - started, 3)
        _wait_idle(svc.ctx.db, ids)
        cycle += time.perf_counter() - started
        requests[name] = sim.request_counts()['total']
    return {'requests_per_task': requests, 'seconds_per_task': seconds,
            'cycle_seconds': round(cycle, 2), 'changed': changed,
            'expected': {name: plan[name][1] for name in plan}}


if __name__ == '__main__':
    sys.exit(main())
