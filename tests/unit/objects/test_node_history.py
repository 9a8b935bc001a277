# SPDX-License-Identifier: Apache-2.0
"""The history entries a node write makes (a pure function of the node as
it was and the columns written), and the statement that writes one on
PostgreSQL."""

import datetime
import re
import uuid

import pytest
from sqlalchemy.dialects import postgresql

from ferrum.objects import base
from ferrum.objects import event as event_obj
from ferrum.objects import node_history

BEFORE = {'id': 7, 'uuid': 'node-7', 'owner': 'o', 'lessee': 'l',
          'provision_state': 'deploying',
          'target_provision_state': 'active', 'last_error': None,
          'maintenance': False, 'maintenance_reason': None, 'fault': None}


def _before(**values):
    found = dict(BEFORE, provision_updated_at=base.utcnow()
                 - datetime.timedelta(seconds=42))
    found.update(values)
    return found


def test_a_write_of_other_columns_makes_no_entry():
    assert node_history.rows(_before(), {'extra': {'a': 1},
                                         'reservation': None}, 'c') == []


def test_a_transition_names_both_states_the_target_and_the_time_spent():
    (entry,) = node_history.rows(_before(), {
        'provision_state': 'active', 'target_provision_state': None}, 'c')
    assert entry['event_type'] == 'transition'
    assert entry['severity'] == 'INFO'
    assert entry['event'] == 'Provision state deploying -> active after 42 s'
    assert (entry['state'], entry['target_provision_state'],
            entry['duration_seconds']) == ('active', None, 42)
    assert (entry['node_id'], entry['node_uuid'], entry['owner'],
            entry['lessee'], entry['conductor']) == (7, 'node-7', 'o', 'l',
                                                     'c')


def test_a_failure_is_an_error_with_its_last_error():
    (entry,) = node_history.rows(_before(), {
        'provision_state': 'deploy failed', 'last_error': 'BMC gone'}, 'c')
    assert entry['severity'] == 'ERROR'
    assert entry['event'].endswith('after 42 s: BMC gone')
    assert entry['target_provision_state'] == 'active'


def test_a_new_error_without_a_transition_and_an_unchanged_one():
    (entry,) = node_history.rows(_before(), {'last_error': 'boom'}, None)
    assert (entry['event_type'], entry['severity'], entry['event']) == (
        'error', 'ERROR', 'boom')
    assert node_history.rows(_before(last_error='boom'),
                             {'last_error': 'boom'}, None) == []
    assert node_history.rows(_before(last_error='boom'),
                             {'last_error': None}, None) == []


def test_maintenance_on_with_reason_and_fault_then_off():
    (on,) = node_history.rows(_before(), {
        'maintenance': True, 'maintenance_reason': 'fan',
        'fault': 'power failure'}, 'c')
    assert on['event'] == 'Maintenance on: fan (fault: power failure)'
    (off,) = node_history.rows(_before(maintenance=True), {
        'maintenance': False, 'maintenance_reason': None}, 'c')
    assert (off['event_type'], off['event']) == ('maintenance',
                                                 'Maintenance off')


def test_notes_come_after_the_derived_entries_and_a_lessee_change_counts():
    entries = node_history.rows(_before(), {
        'maintenance': True, 'lessee': None}, 'c', [
            node_history.note('takeover', 'Taken over')])
    assert [e['event_type'] for e in entries] == ['maintenance', 'takeover']
    assert {e['lessee'] for e in entries} == {None}
    assert len({e['uuid'] for e in entries}) == 2


def test_the_write_time_dates_the_entry_and_its_duration():
    now = base.utcnow()
    before = _before(provision_updated_at=now - datetime.timedelta(
        seconds=90))
    (entry,) = node_history.rows(before, {'provision_state': 'active'},
                                 'c', now=now)
    assert entry['created_at'] == now
    assert entry['duration_seconds'] == 90


def test_entry_uuids_are_version_4_and_an_unknown_column_is_refused():
    entries = [event_obj.entry('test', 'x') for _ in range(200)]
    parsed = [uuid.UUID(e['uuid']) for e in entries]
    assert [str(u) for u in parsed] == [e['uuid'] for e in entries]
    assert {u.version for u in parsed} == {4}
    assert {u.variant for u in parsed} == {uuid.RFC_4122}
    assert len(set(parsed)) == len(parsed)
    with pytest.raises(TypeError, match='not an event column: colour'):
        event_obj.entry('test', 'x', colour='blue')


@pytest.mark.parametrize('dialect', [postgresql.psycopg2.dialect(),
                                     postgresql.psycopg.dialect()],
                         ids=['psycopg2', 'psycopg'])
def test_postgresql_takes_an_entry_as_it_is_in_the_sql_it_is_sent_as(
        dialect):
    # The one-row statement goes to the driver as written, without
    # SQLAlchemy's type processing: that holds only while no column of
    # events needs converting on PostgreSQL (a JSON column would), while
    # both drivers take its parameter markers, and while its parameters
    # are the entry's columns, in the order of the columns it names.
    assert event_obj._conversions(dialect) == ()
    assert dialect.paramstyle == 'pyformat'
    sql = event_obj._TAIL_AND_INSERT % (10000,)
    columns = re.search(r'INSERT INTO events \((.*?)\)', sql).group(1)
    assert columns.split(', ') == list(event_obj.COLUMNS)
    assert re.findall(r'%\((\w+)\)s', sql) == list(event_obj.COLUMNS)
    # The lock (and the writer's deadline) before the row takes its id.
    assert sql.startswith(
        'WITH tail AS MATERIALIZED (SELECT pg_advisory_xact_lock_shared(%d), '
        "set_config('idle_in_transaction_session_timeout', '10000', true))"
        % event_obj.FEED_LOCK)
    assert 'RETURNING' not in sql and ' id' not in columns
