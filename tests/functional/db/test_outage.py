# SPDX-License-Identifier: Apache-2.0
"""The database goes away under load and comes back: 503s, never a 500.

Clients keep creating and deleting allocations, deploying and undeploying
nodes and listing them while the database is stopped (PostgreSQL, with
``pg_ctl stop``) or its file made unusable (SQLite). During the outage
every answer is a 2xx or 4xx from before, or a 503 with ``Retry-After``
naming the database; afterwards service is whole again within 5 s, and no
node is left locked or in a transient state, no allocation ``allocating``.
"""

import json
import os
import pathlib
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests

from ferrum.common import exception
from ferrum.common import states
from ferrum.db import api as db_api
from ferrum.db import migration
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from tests.functional.rpc import cluster
from tests.polling import wait_for

V = {'X-OpenStack-Ironic-API-Version': '1.65'}
NODES = 12
RECOVERY_S = 5.0


class Load:
    """Client threads calling the API until stopped; every answer counted.

    ``call(method, path, json=None)`` returns (status, headers, text).
    """

    def __init__(self, call: Callable[..., tuple[int, Any, str]],
                 node_uuids: list[str]) -> None:
        self.call = call
        self.nodes = node_uuids
        self.codes: Counter[int] = Counter()
        self.bad: list[str] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=target, args=(index,),
                                          daemon=True)
                         for index, target in enumerate(
                             [self._allocate] * 3 + [self._deploy] * 2
                             + [self._list])]

    def _record(self, answer: tuple[int, Any, str]) -> int:
        code, headers, text = answer
        with self._lock:
            self.codes[code] += 1
            if code >= 500 and (code != 503 or 'database' not in text
                                or 'Retry-After' not in headers):
                self.bad.append('%d %s' % (code, text[:300]))
        return code

    def _allocate(self, index: int) -> None:
        while not self._stop.is_set():
            code, _h, text = answer = self.call(
                'POST', '/v1/allocations', {'resource_class': 'outage'})
            self._record(answer)
            if code == 201:
                uuid = json.loads(text)['uuid']
                self._record(self.call('DELETE', '/v1/allocations/' + uuid))

    def _deploy(self, index: int) -> None:
        node = self.nodes[index]
        target = 'active'
        while not self._stop.is_set():
            code = self._record(self.call(
                'PUT', '/v1/nodes/%s/states/provision' % node,
                {'target': target}))
            if code == 202:
                target = 'deleted' if target == 'active' else 'active'

    def _list(self, _index: int) -> None:
        while not self._stop.is_set():
            self._record(self.call('GET', '/v1/nodes/detail'))

    def __enter__(self) -> 'Load':
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_exc: Any) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)

    def count(self, code: int) -> int:
        with self._lock:
            return self.codes[code]


def _outage(load: Load, stop: Callable[[], None],
            start: Callable[[], None]) -> float:
    """Take the database away until clients saw 503s; bring it back.

    Returns how long full service took to return.
    """
    wait_for(lambda: load.count(201) >= 3, timeout=30,
             what='allocations before the outage')
    stop()
    try:
        seen = load.count(503)
        wait_for(lambda: load.count(503) >= seen + 10, timeout=30,
                 what='503s during the outage')
    finally:
        start()
    started = time.monotonic()

    def served() -> bool:
        code, _h, _t = load.call('GET', '/v1/nodes')
        return code == 200
    wait_for(served, timeout=RECOVERY_S, interval=0.05,
             what='the API to answer again')
    before = load.count(201)
    wait_for(lambda: load.count(201) >= before + 3, timeout=RECOVERY_S,
             interval=0.05, what='allocations to succeed again')
    return time.monotonic() - started


def _settled(db: db_api.Database) -> None:
    """Nothing locked, no node in a transient state, nothing allocating."""
    def check() -> bool:
        try:
            nodes = node_obj.Node.list(db)
        except exception.DatabaseUnavailable:
            return False  # this process's pool meets the restart once too
        transient = [(n.uuid, n.provision_state, n.reservation)
                     for n in nodes if n.reservation is not None
                     or n.provision_state in
                     states.STUCK_STATES_TREATED_AS_FAIL]
        allocating = [a.uuid for a in allocation_obj.Allocation.list(db)
                      if a.state == allocation_obj.ALLOCATING]
        return not transient and not allocating
    wait_for(check, timeout=RECOVERY_S, interval=0.05,
             what='no lock, transient node or allocating allocation')


def _enroll(call: Callable[..., tuple[int, Any, str]],
            db: db_api.Database) -> list[str]:
    uuids = []
    for _ in range(NODES):
        code, _h, text = call('POST', '/v1/nodes', {
            'driver': 'fake-hardware', 'resource_class': 'outage'})
        assert code == 201, text
        uuid = json.loads(text)['uuid']
        for target, state in (('manage', 'manageable'),
                              ('provide', 'available')):
            assert call('PUT', '/v1/nodes/%s/states/provision' % uuid,
                        {'target': target})[0] == 202
            wait_for(lambda uuid=uuid, state=state: node_obj.Node.get(
                db, uuid).provision_state == state, timeout=30,
                what='node %s' % state)
        uuids.append(uuid)
    return uuids


def _http(url: str) -> Callable[..., tuple[int, Any, str]]:
    local = threading.local()

    def call(method: str, path: str, body: Any = None
             ) -> tuple[int, Any, str]:
        session = getattr(local, 'session', None)
        if session is None:
            session = local.session = requests.Session()
        response = session.request(method, url + path, json=body,
                                   headers=V, timeout=60)
        return response.status_code, response.headers, response.text
    return call


def _assert_outcome(load: Load, recovery_s: float) -> None:
    assert load.count(503) >= 10
    assert load.bad == []
    assert not [code for code in load.codes if code >= 500 and code != 503]
    assert recovery_s <= RECOVERY_S


# ---- PostgreSQL, split layout: ferrum-api and a ferrum-conductor -----------

@pytest.fixture
def outage_pg_url(own_postgresql_server: Any) -> Iterator[str]:
    name = 'ferrum_outage_%d' % os.getpid()
    own_postgresql_server.create_database(name)
    try:
        yield own_postgresql_server.url(name)
    finally:
        own_postgresql_server.drop_database(name)


def test_postgresql_outage_under_the_split_layout(
        tmp_path: pathlib.Path, conf: Any, outage_pg_url: str,
        own_postgresql_server: Any) -> None:
    with cluster.running(tmp_path, conf, outage_pg_url,
                         ['conductor-1']) as (url, _procs, db):
        call = _http(url)
        with Load(call, _enroll(call, db)) as load:
            recovery = _outage(load, own_postgresql_server.stop,
                               own_postgresql_server.start_again)
        _settled(db)
        _assert_outcome(load, recovery)
        # Still fully working: a new allocation takes a node.
        code, _h, text = call('POST', '/v1/allocations',
                              {'resource_class': 'outage'})
        assert code == 201 and '"active"' in text, text


# ---- SQLite, all in one process --------------------------------------------

def test_sqlite_file_unusable_in_process(conf: Any, tmp_path: pathlib.Path
                                         ) -> None:
    from ferrum.api import app as api_app
    from ferrum.conductor import service

    conf.set_override('heartbeat_interval', 1, group='conductor')
    database = db_api.Database(conf)
    migration.upgrade(database.engine)
    path = pathlib.Path(database.url[len('sqlite:///'):])
    conductor = service.ConductorService(conf, db=database)
    conductor.start(start_periodics=False)
    app = api_app.create_app(conf, database,
                             conductor.manager)
    local = threading.local()

    def call(method: str, path_: str, body: Any = None
             ) -> tuple[int, Any, str]:
        client = getattr(local, 'client', None)
        if client is None:
            client = local.client = app.test_client()
        response = client.open(path_, method=method, json=body, headers=V)
        return (response.status_code, response.headers,
                response.get_data(as_text=True))

    moved = path.with_name(path.name + '.away')
    dangling = path.with_name(path.name + '.link')

    def unusable() -> None:
        # In one atomic step the name comes to point into a directory that
        # does not exist (no connection can open it, nor create an empty
        # database there); the pooled connections go as a failing disk
        # would take them.
        os.link(path, moved)
        os.symlink(tmp_path / 'no-such-dir' / 'ferrum.sqlite', dangling)
        os.rename(dangling, path)
        database.engine.dispose()

    def usable() -> None:
        os.rename(moved, path)

    try:
        with Load(call, _enroll(call, database)) as load:
            recovery = _outage(load, unusable, usable)
        _settled(database)
        _assert_outcome(load, recovery)
    finally:
        conductor.stop()
        database.dispose()
