# SPDX-License-Identifier: Apache-2.0
"""A process of event writers, for the feed's storm test.

``python -m tests.functional.leases.event_writers URL THREADS COUNT SEED``
runs THREADS threads on the database at URL, each COUNT write
transactions through ferrum's own database layer: lock a node's row (as
a real change does), record one to three events, then spend up to 3 ms
between the ids and the commit, the window in which a bare sequence shows
a higher id before a lower one, and roll back one transaction in ten.
Prints the number of transactions committed.
"""

import random
import sys
import threading

import sqlalchemy as sa

from ferrum import conf as ferrum_conf
from ferrum.db import api as db_api
from ferrum.objects import event as event_obj
from ferrum.objects import node as node_obj


class _RolledBack(Exception):
    pass


def _tail(pause: float, roll_back: bool) -> None:
    # Workload, not a wait for anything: the commit comes this much after
    # the ids were taken.
    threading.Event().wait(pause)
    if roll_back:
        raise _RolledBack()


def main() -> None:
    url, threads, count, seed = (sys.argv[1], int(sys.argv[2]),
                                 int(sys.argv[3]), int(sys.argv[4]))
    db = db_api.Database(ferrum_conf.new_conf(), url=url, create=False)
    with db.reader() as conn:
        nodes = conn.execute(sa.select(node_obj.TABLE.c.id)).scalars().all()
    committed = []

    def write(thread: int) -> None:
        rng = random.Random(seed * 100 + thread)
        for number in range(count):
            node_id = rng.choice(nodes)
            try:
                with db.writer() as conn:
                    conn.execute(sa.update(node_obj.TABLE).where(
                        node_obj.TABLE.c.id == node_id).values(
                            extra={'storm': number}))
                    event_obj.add(db, [event_obj.entry(
                        'storm', 'p%d t%d #%d' % (seed, thread, number),
                        node_id=node_id) for _ in range(rng.randint(1, 3))])
                    db.before_commit(lambda _conn: _tail(
                        rng.random() * 0.003, rng.random() < 0.1))
            except _RolledBack:
                continue
            committed.append(number)

    workers = [threading.Thread(target=write, args=(thread,))
               for thread in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    db.dispose()
    print(len(committed))


if __name__ == '__main__':
    main()
