# SPDX-License-Identifier: Apache-2.0
"""Two conductors on one real PostgreSQL never both hold a node lock.

Each conductor has its own engine and connection pool, as two processes
would; only the database arbitrates. 2 conductors x 8 threads hammer the
same few nodes and record, under a Python lock used only for *checking*,
who holds each node at every moment.
"""

import threading

from ferrum import conf as ferrum_conf
from ferrum.common import exception
from ferrum.conductor import service
from ferrum.conductor import task_manager
from ferrum.db import api as db_api
from ferrum.objects import node as node_obj


def _conductor(host, url, tmp_path):
    conf = ferrum_conf.new_conf()
    conf.set_override('host', host)
    conf.set_override('state_path', str(tmp_path))
    conf.set_override('node_locked_retry_attempts', 1, 'conductor')
    svc = service.ConductorService(conf, db=db_api.Database(conf, url=url))
    svc.start(start_periodics=False)
    return svc


def test_two_conductors_never_both_hold_a_lock(pg_db, tmp_path):
    url = pg_db.engine.url.render_as_string(hide_password=False)
    first = _conductor('conductor-a', url, tmp_path)
    second = _conductor('conductor-b', url, tmp_path)
    nodes = [first.manager.create_node({'driver': 'fake-hardware'})
             for _ in range(4)]
    holders: dict[int, str] = {}
    check = threading.Lock()
    violations: list[str] = []
    wins = {'conductor-a': 0, 'conductor-b': 0}
    conflicts = [0]

    def hammer(svc, rounds=60):
        for i in range(rounds):
            node = nodes[i % len(nodes)]
            try:
                with task_manager.acquire(svc.ctx, node.id, retry=False,
                                          purpose='race test') as task:
                    with check:
                        if node.id in holders:
                            violations.append('%s and %s both hold %s' % (
                                holders[node.id], svc.ctx.host, node.uuid))
                        holders[node.id] = svc.ctx.host
                        wins[svc.ctx.host] += 1
                    task.node.extra['last'] = svc.ctx.host
                    with check:
                        del holders[node.id]
            except exception.NodeLocked:
                with check:
                    conflicts[0] += 1

    threads = [threading.Thread(target=hammer, args=(svc,))
               for svc in (first, second) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert violations == []
        assert wins['conductor-a'] > 0 and wins['conductor-b'] > 0
        assert conflicts[0] > 0, 'the test never made the conductors collide'
        assert node_obj.Node.list(pg_db, {'reserved': True}) == []
    finally:
        first.stop()
        second.stop()
