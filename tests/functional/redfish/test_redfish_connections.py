# SPDX-License-Identifier: Apache-2.0
"""The connection cache of drivers/redfish/client/ against a BMC with
sessions that counts what it is asked (fake_bmc.py): one login however
many calls arrive at once, a dropped connection logged out at once (not
whenever the garbage collector runs), and the one System listed once."""

import gc
import hashlib
import logging
import threading

import futurist
import pytest

from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from tests.functional.redfish.emulator import apply_conf
from tests.polling import wait_for


def _read(conf, info):
    return client.call(conf, driver_info.parse(info), 'reading the power '
                       'state', lambda system: system.power_state)


def test_concurrent_first_calls_to_one_bmc_log_in_once(
        conf, fake_bmc, fresh_connections, caplog):
    apply_conf(conf)
    caplog.set_level(logging.DEBUG, logger=client.__name__)
    fake_bmc.login_gate.clear()  # the first login waits at the BMC
    results = []
    threads = [threading.Thread(
        target=lambda: results.append(_read(conf, fake_bmc.driver_info())))
        for _ in range(6)]
    for thread in threads:
        thread.start()

    def all_arrived():
        waiting = [r for r in caplog.records
                   if r.getMessage().startswith('Waiting for the connection')]
        # Without the per-BMC opening, each call logs in on its own.
        return len(waiting) == 5 or fake_bmc.count('login asked') == 6
    wait_for(all_arrived, timeout=60, interval=0.01,
             what='the calls to reach the BMC or wait for its connection')
    fake_bmc.login_gate.set()
    for thread in threads:
        thread.join(60)
    assert [state.value for state in results] == ['Off'] * 6
    assert fake_bmc.count('login') == 1
    assert len(fresh_connections) == 1


def test_a_refused_login_is_not_kept_and_the_next_call_tries_again(
        conf, fake_bmc, fresh_connections):
    apply_conf(conf)
    with pytest.raises(errors.RedfishAuthError):
        _read(conf, fake_bmc.driver_info(redfish_password='not-it'))
    assert len(fresh_connections) == 0
    assert _read(conf, fake_bmc.driver_info()).value == 'Off'


def test_an_evicted_connection_logs_out_at_once(conf, fake_bmc,
                                                fresh_connections):
    apply_conf(conf, {'redfish': {'connection_cache_size': 1}})
    gc.disable()  # sushy's own clean-up runs only when collected
    try:
        _read(conf, fake_bmc.driver_info())
        assert (fake_bmc.count('login'), fake_bmc.count('logout')) == (1, 0)
        # Another TLS setting is another connection; the first goes.
        _read(conf, fake_bmc.driver_info(redfish_verify_ca='false'))
        assert len(fresh_connections) == 1
        assert (fake_bmc.count('login'), fake_bmc.count('logout')) == (2, 1)
    finally:
        gc.enable()
    fresh_connections.clear()
    assert fake_bmc.count('logout') == 2


def test_a_connection_in_use_is_closed_when_its_last_call_ends(
        conf, fake_bmc, fresh_connections):
    apply_conf(conf, {'redfish': {'connection_cache_size': 1}})
    params = driver_info.parse(fake_bmc.driver_info())
    with fresh_connections.using(conf, params) as busy:
        # Evicted by another connection while a call still uses it.
        _read(conf, fake_bmc.driver_info(redfish_verify_ca='false'))
        assert fake_bmc.count('logout') == 0
        assert busy.root.get_system('/redfish/v1/Systems/1').power_state
    assert fake_bmc.count('logout') == 1


def test_without_a_system_id_the_systems_are_listed_once(
        conf, fake_bmc, fresh_connections):
    apply_conf(conf)
    info = fake_bmc.driver_info()
    del info['redfish_system_id']
    for _ in range(3):
        assert _read(conf, info).value == 'Off'
    assert fake_bmc.count('list') == 1
    assert fake_bmc.count('read') == 3


def test_clearing_logs_out_of_the_bmcs_side_by_side(conf, fake_bmc,
                                                    fresh_connections):
    """A stopping conductor does not wait for one silent BMC after
    another: every logout is asked while none has been answered."""
    apply_conf(conf)
    variants = [{}, {'redfish_verify_ca': 'false'},
                {'redfish_auth_type': 'auto'}]
    for extra in variants:
        _read(conf, fake_bmc.driver_info(**extra))
    assert len(fresh_connections) == 3
    fake_bmc.logout_gate.clear()
    clearing = threading.Thread(target=fresh_connections.clear)
    clearing.start()
    try:
        wait_for(lambda: fake_bmc.count('logout asked') == 3, timeout=60,
                 interval=0.01, what='the three logouts to be asked')
    finally:
        fake_bmc.logout_gate.set()
        clearing.join(60)
    assert not clearing.is_alive()
    assert fake_bmc.count('logout') == 3
    assert len(fresh_connections) == 0


class _OneThreadThenNone(futurist.SynchronousExecutor):
    """Runs the first logout given it, then has no thread to start (as
    at interpreter exit, or at the process's thread limit)."""

    def __init__(self, max_workers):
        super().__init__()
        self.started = 0

    def submit(self, fn, *args, **kwargs):
        if self.started:
            raise RuntimeError("can't start new thread")
        self.started += 1
        return super().submit(fn, *args, **kwargs)


def test_without_threads_clearing_logs_out_of_the_rest_one_by_one(
        conf, fake_bmc, fresh_connections, monkeypatch, caplog):
    apply_conf(conf)
    caplog.set_level(logging.DEBUG, logger=client.__name__)
    for extra in [{}, {'redfish_verify_ca': 'false'},
                  {'redfish_auth_type': 'auto'}]:
        _read(conf, fake_bmc.driver_info(**extra))
    assert len(fresh_connections) == 3
    monkeypatch.setattr(futurist, 'ThreadPoolExecutor', _OneThreadThenNone)
    fresh_connections.clear()
    # Each once: the one the pool ran, and the other two after it.
    assert fake_bmc.count('logout') == 3
    assert len(fresh_connections) == 0
    assert any(r.getMessage().startswith('Logging out of the BMCs one by '
                                         'one') for r in caplog.records)


def test_the_cache_key_holds_no_plain_password_digest():
    params = driver_info.parse({'redfish_address': 'http://127.0.0.1:1',
                                'redfish_password': 'pw'})
    key = client._key(params)
    assert hashlib.sha256(b'pw').hexdigest() not in key
    assert 'pw' not in key
    assert client._key(params) == key  # stable within the process


def test_a_stopping_conductor_logs_out_of_its_bmcs(conf, db, fake_bmc,
                                                    fresh_connections):
    """BMCs allow few sessions: a conductor restarted a few times must not
    leave its old ones open until they time out."""
    from ferrum.common import states
    from ferrum.conductor import service
    from tests.functional.conductor.flows import settled
    apply_conf(conf)
    conductor = service.ConductorService(conf, db=db)
    conductor.start(start_periodics=False)
    try:
        node = conductor.manager.create_node(
            {'driver': 'redfish', 'driver_info': fake_bmc.driver_info()})
        conductor.manager.do_provisioning_action(node.uuid, 'manage')
        node = settled(db, node.id, states.MANAGEABLE, timeout=60)
        assert node.power_state == states.POWER_OFF  # read at the BMC
        assert (fake_bmc.count('login'), fake_bmc.count('logout')) == (1, 0)
    finally:
        conductor.stop()
    assert fake_bmc.count('logout') == 1
    assert len(fresh_connections) == 0
