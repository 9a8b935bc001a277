# SPDX-License-Identifier: Apache-2.0
"""Outages and crashes, with the real Placement as a gunicorn process and a
real ``ferrum-conductor`` process killed with SIGKILL."""

import logging
import os
import signal
import sys
import textwrap

from ferrum.common import states
from ferrum.conductor import service
from ferrum.objects import node as node_obj
from ferrum.placement import client as client_mod
from ferrum.placement import outbox
from ferrum.placement import records
from tests import process
from tests.functional.conductor.flows import to_state
from tests.functional.placement.deployment import configure
from tests.functional.placement.scenario import assert_no_drift
from tests.functional.placement.scenario import converged
from tests.functional.placement.scenario import reserved
from tests.polling import wait_for

BIN = os.path.dirname(sys.executable)


def _lines(caplog, text):
    return [r for r in caplog.records if text in r.getMessage()]


def test_placement_killed_and_restarted_mid_stream(conf, db, caplog,
                                                   placement_process):
    caplog.set_level(logging.INFO, logger='ferrum.placement')
    configure(conf, placement_process.endpoint)
    conf.set_override('poll_interval', 0.02, group='placement')
    conf.set_override('outage_retry_interval', 1, group='placement')
    svc = service.ConductorService(conf, db=db)
    svc.start(start_periodics=False)
    client = client_mod.PlacementClient(conf)
    try:
        manager = svc.manager
        first = [manager.create_node({'driver': 'fake-hardware',
                                      'resource_class': 'bm'})
                 for _ in range(5)]
        converged(db, timeout=30)
        placement_process.kill()
        # Node operations go on while Placement is away, and none fails.
        for node in first:
            to_state(manager, db, node, 'available')
        more = [manager.create_node({'driver': 'fake-hardware',
                                     'resource_class': 'bm'})
                for _ in range(5)]
        for node in more[:2]:
            to_state(manager, db, node, 'manageable')
        wait_for(lambda: records.statuses(db)[0]['state']
                 == records.UNAVAILABLE, what='the outage to be recorded')
        assert outbox.backlog(db).nodes == 10
        placement_process.start()
        converged(db, timeout=30)
        assert records.statuses(db)[0]['state'] == records.OK
        for node in first:
            assert reserved(client, node.uuid) == 0
        for node in more:
            assert reserved(client, node.uuid) == 1
        assert_no_drift(conf, db, client)
    finally:
        svc.stop()
    assert len(_lines(caplog, 'Placement sync stopped')) == 1
    assert len(_lines(caplog, 'Placement answers again')) == 1


def test_conductor_sigkill_with_pending_changes(tmp_path, conf, db,
                                                placement_process):
    """Changes queued when the conductor dies are pushed after restart."""
    path = tmp_path / 'ferrum.conf'
    path.write_text(textwrap.dedent('''
        [DEFAULT]
        host = test-conductor
        state_path = %(state)s
        log_file = %(log)s
        [conductor]
        heartbeat_interval = 1
        [placement]
        auth_type = admin_token
        endpoint = %(endpoint)s
        token = admin
        poll_interval = 0.02
        outage_retry_interval = 1
        ''' % {'state': tmp_path, 'log': tmp_path / 'conductor.log',
               'endpoint': placement_process.endpoint}))
    configure(conf, placement_process.endpoint)
    conf.set_override('poll_interval', 0.02, group='placement')
    with process.running([os.path.join(BIN, 'ferrum-conductor'),
                          '--config-file', str(path)]) as proc:
        wait_for(lambda: records.statuses(db), timeout=30,
                 what='the conductor to start its sync')
        placement_process.kill()
        # Changes made while the conductor cannot push them...
        nodes = [node_obj.Node.create(db, {
            'driver': 'fake-hardware', 'resource_class': 'bm',
            'provision_state': states.AVAILABLE,
            'power_state': states.POWER_OFF}) for _ in range(4)]
        wait_for(lambda: records.statuses(db)[0]['state']
                 == records.UNAVAILABLE, what='the outage to be seen')
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert outbox.backlog(db).nodes == 4
    placement_process.start()
    restarted = service.ConductorService(conf, db=db)
    restarted.start(start_periodics=False)
    try:
        converged(db, timeout=30)
        client = client_mod.PlacementClient(conf)
        for node in nodes:
            assert reserved(client, node.uuid) == 0
        assert_no_drift(conf, db, client)
    finally:
        restarted.stop()
