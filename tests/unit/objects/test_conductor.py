# SPDX-License-Identifier: Apache-2.0
"""Conductor registrations as the API reads them: drivers, secrets,
liveness."""

import datetime

import sqlalchemy as sa

from ferrum.drivers import loader
from ferrum.objects import base
from ferrum.objects import conductor as conductor_obj

TIMEOUT = 60


def _iface(hw_type, kind, name, default=False, properties=None,
           secrets=()):
    return conductor_obj.HardwareInterface(
        hardware_type=hw_type, interface_type=kind, interface_name=name,
        default=default, properties=properties or {},
        secret_properties=frozenset(secrets))


def _register(db, hostname, interfaces, group=''):
    me = conductor_obj.register(db, hostname, group, TIMEOUT)
    conductor_obj.set_hardware_interfaces(db, me.id, interfaces)
    return me


def _stop_heartbeat(db, hostname):
    """As if the conductor died: its last heartbeat is too old."""
    old = base.utcnow() - datetime.timedelta(seconds=TIMEOUT + 1)
    with db.writer() as conn:
        conn.execute(sa.update(conductor_obj.TABLE)
                     .where(conductor_obj.TABLE.c.hostname == hostname)
                     .values(heartbeat_at=old))


def test_interfaces_keep_properties_and_secrets(db):
    me = _register(db, 'c1', [
        _iface('acme', 'power', 'acme', True, {'acme_token': 'Required.'},
               ['acme_token', 'acme_key']),
        _iface('acme', 'boot', 'noop', True)])
    power, boot = conductor_obj.list_hardware_interfaces(db, me.id)
    assert power.properties == {'acme_token': 'Required.'}
    assert power.secret_properties == {'acme_token', 'acme_key'}
    assert (boot.interface_name, boot.properties,
            boot.secret_properties) == ('noop', {}, frozenset())
    with db.reader() as conn:
        stored = conn.execute(sa.select(
            conductor_obj.IFACES.c.secret_properties)).scalars().all()
    assert stored == [['acme_key', 'acme_token'], []]


def test_rows_registered_before_the_columns_existed_read_as_empty(db):
    me = _register(db, 'c1', [_iface('acme', 'power', 'acme', True)])
    with db.writer() as conn:
        conn.execute(sa.update(conductor_obj.IFACES).values(
            properties=None, secret_properties=None))
    [power] = conductor_obj.list_hardware_interfaces(db, me.id)
    assert (power.properties, power.secret_properties) == ({}, frozenset())
    assert conductor_obj.secret_keys(db) == {('acme', 'power', 'acme'): set()}


def test_registry_advertises_what_each_interface_declares(conf):
    rows = loader.DriverRegistry(conf).advertised()
    power = next(r for r in rows if r.interface_type == 'power')
    assert (power.hardware_type, power.interface_name) == (
        'fake-hardware', 'fake')
    assert power.secret_properties == {'fake_secret'}
    assert 'fake_secret' in power.properties
    noop_boot = next(r for r in rows if r.interface_type == 'boot'
                     and r.interface_name == 'noop')
    assert not noop_boot.default
    assert noop_boot.secret_properties == frozenset()


def test_secret_keys_is_the_union_over_all_registrations(db):
    _register(db, 'c1', [
        _iface('acme', 'power', 'acme', True, secrets=['token']),
        _iface('acme', 'boot', 'noop', True)])
    _register(db, 'c2', [
        _iface('acme', 'power', 'acme', True, secrets=['key']),
        _iface('other', 'power', 'acme', True, secrets=['pin'])])
    # A dead conductor's declarations still count: its nodes keep their
    # secrets hidden while it is down.
    _stop_heartbeat(db, 'c2')
    assert conductor_obj.secret_keys(db) == {
        ('acme', 'power', 'acme'): {'token', 'key'},
        ('acme', 'boot', 'noop'): set(),
        ('other', 'power', 'acme'): {'pin'}}


def test_alive_drivers_lists_live_conductors_only(db):
    _register(db, 'c1', [_iface('acme', 'power', 'acme', True),
                         _iface('acme', 'boot', 'noop', True),
                         _iface('fake-hardware', 'power', 'fake', True)],
              group='rack-1')
    _register(db, 'c2', [])
    _register(db, 'dead', [_iface('acme', 'power', 'acme', True)])
    _stop_heartbeat(db, 'dead')
    stopped = _register(db, 'stopped', [_iface('x', 'power', 'x', True)])
    conductor_obj.unregister(db, stopped.id)

    assert conductor_obj.alive_drivers(db, TIMEOUT) == {
        'c1': ('rack-1', frozenset({'acme', 'fake-hardware'})),
        'c2': ('', frozenset())}
    assert not conductor_obj.is_alive(conductor_obj.get(db, 'dead'), TIMEOUT)


def test_hardware_types_of_includes_dead_conductors(db):
    live = _register(db, 'c1', [_iface('b', 'power', 'x', True),
                                _iface('b', 'boot', 'x', True),
                                _iface('a', 'power', 'x', True)])
    dead = _register(db, 'dead', [_iface('c', 'power', 'x', True)])
    empty = _register(db, 'empty', [])
    _stop_heartbeat(db, 'dead')
    assert conductor_obj.hardware_types_of(
        db, [live.id, dead.id, empty.id]) == {live.id: ['a', 'b'],
                                              dead.id: ['c']}


def test_active_hardware_types_merge_live_conductors(db):
    _register(db, 'c2', [
        _iface('acme', 'power', 'acme', True, {'a': 'from c2', 'd': 'c2'}),
        _iface('acme', 'power', 'ipmi', False, {'ipmi_only': 'no'}),
        _iface('acme', 'boot', 'pxe', True, {'b': 'boot'})])
    _register(db, 'c1', [
        _iface('acme', 'power', 'redfish', False),
        _iface('acme', 'power', 'acme', True, {'a': 'from c1', 'c': 'c1'}),
        _iface('acme', 'boot', 'noop', True),
        _iface('fake-hardware', 'power', 'fake', True)])
    _register(db, 'dead', [_iface('ghost', 'power', 'ghost', True),
                           _iface('acme', 'power', 'dead', True)])
    _stop_heartbeat(db, 'dead')

    acme, fake = conductor_obj.active_hardware_types(db, TIMEOUT)
    assert (acme.name, fake.name) == ('acme', 'fake-hardware')
    assert acme.hosts == ('c1', 'c2') and fake.hosts == ('c1',)
    # Preference order, first conductor by hostname first; no duplicates.
    assert acme.enabled == {'power': ('redfish', 'acme', 'ipmi'),
                            'boot': ('noop', 'pxe')}
    # When conductors disagree, the first live one by hostname decides.
    assert acme.defaults == {'power': 'acme', 'boot': 'noop'}
    # Properties of the default interfaces only (not c2's pxe boot), from
    # every live host; the first one by hostname wins a disagreement.
    assert acme.properties == {'a': 'from c1', 'c': 'c1', 'd': 'c2'}

    assert conductor_obj.active_hardware_types(db, TIMEOUT, 'ghost') == []
    [only] = conductor_obj.active_hardware_types(db, TIMEOUT,
                                                 'fake-hardware')
    assert only == fake


def test_list_page_sorts_and_pages(db):
    for name in ('b', 'c', 'a'):
        _register(db, name, [])
    first = conductor_obj.list_page(db, 2, 'hostname', 'asc')
    assert [c.hostname for c in first] == ['a', 'b']
    rest = conductor_obj.list_page(db, 2, 'hostname', 'asc', first[-1])
    assert [c.hostname for c in rest] == ['c']
    by_id = conductor_obj.list_page(db, None, 'id', 'desc')
    assert [c.hostname for c in by_id] == ['a', 'c', 'b']
    assert all(c.created_at is not None for c in by_id)
