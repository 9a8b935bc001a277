# SPDX-License-Identifier: Apache-2.0
"""The provision state machine: a golden copy of the table, and its shape.

The golden test is meant to fail on *any* change to the transition table.
When the change is intended, update ``EXPECTED_TRANSITIONS`` below and run
``make states`` so the committed picture (doc/states.dot, doc/states.svg)
shows it too.
"""

import collections
import importlib.util
import pathlib
import types

import pytest
from automaton import exceptions as automaton_exc

from ferrum.common import exception
from ferrum.common import state_machine
from ferrum.common import states
from ferrum.conductor import provisioning

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
DOT_FILE = REPO_ROOT / 'doc' / 'states.dot'
TOOL = REPO_ROOT / 'tools' / 'states_to_dot.py'

#: The whole table, sorted, spelled with the state strings clients see (so
#: renaming a constant's value fails here too).
EXPECTED_TRANSITIONS = [
    ('active', 'delete', 'deleting'),
    ('active', 'rebuild', 'deploying'),
    ('adopt failed', 'adopt', 'adopting'),
    ('adopt failed', 'manage', 'manageable'),
    ('adopting', 'done', 'active'),
    ('adopting', 'fail', 'adopt failed'),
    ('available', 'deploy', 'deploying'),
    ('available', 'manage', 'manageable'),
    ('clean failed', 'manage', 'manageable'),
    ('clean wait', 'abort', 'clean failed'),
    ('clean wait', 'fail', 'clean failed'),
    ('clean wait', 'resume', 'cleaning'),
    ('cleaning', 'done', 'available'),
    ('cleaning', 'fail', 'clean failed'),
    ('cleaning', 'manage', 'manageable'),
    ('cleaning', 'wait', 'clean wait'),
    ('deleting', 'clean', 'cleaning'),
    ('deleting', 'fail', 'error'),
    ('deploy failed', 'delete', 'deleting'),
    ('deploy failed', 'deploy', 'deploying'),
    ('deploy failed', 'rebuild', 'deploying'),
    ('deploying', 'done', 'active'),
    ('deploying', 'fail', 'deploy failed'),
    ('deploying', 'wait', 'wait call-back'),
    ('enroll', 'manage', 'verifying'),
    ('error', 'delete', 'deleting'),
    ('error', 'rebuild', 'deploying'),
    ('inspect failed', 'inspect', 'inspecting'),
    ('inspect failed', 'manage', 'manageable'),
    ('inspect wait', 'abort', 'inspect failed'),
    ('inspect wait', 'done', 'manageable'),
    ('inspect wait', 'fail', 'inspect failed'),
    ('inspect wait', 'resume', 'inspecting'),
    ('inspecting', 'done', 'manageable'),
    ('inspecting', 'fail', 'inspect failed'),
    ('inspecting', 'wait', 'inspect wait'),
    ('manageable', 'adopt', 'adopting'),
    ('manageable', 'clean', 'cleaning'),
    ('manageable', 'inspect', 'inspecting'),
    ('manageable', 'provide', 'cleaning'),
    ('verifying', 'done', 'manageable'),
    ('verifying', 'fail', 'enroll'),
    ('wait call-back', 'abort', 'deploy failed'),
    ('wait call-back', 'delete', 'deleting'),
    ('wait call-back', 'fail', 'deploy failed'),
    ('wait call-back', 'resume', 'deploying'),
]

#: Events the conductor fires itself; all others must be API verbs.
CONDUCTOR_EVENTS = {'done', 'fail', 'wait', 'resume'}
#: The events the provision verbs fire.
VERB_EVENTS = {verb.event for verb in provisioning.VERBS.values()}

TRANSITIONS = state_machine.TRANSITIONS


def _successors() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = collections.defaultdict(set)
    for start, _event, end in TRANSITIONS:
        graph[start].add(end)
    return graph


def _reachable(start: str) -> set[str]:
    graph = _successors()
    seen = {start}
    todo = [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _exits(state: str) -> dict[str, str]:
    return {event: end for start, event, end in TRANSITIONS if start == state}


# ---- the table itself -------------------------------------------------------

def test_transition_table_is_golden():
    # On failure: if the change is intended, copy the new table here (sorted)
    # and run `make states` to redraw doc/states.svg.
    assert sorted(TRANSITIONS) == EXPECTED_TRANSITIONS


def test_no_duplicate_or_ambiguous_transitions():
    assert len(set(TRANSITIONS)) == len(TRANSITIONS)
    pairs = collections.Counter((start, event)
                                for start, event, _end in TRANSITIONS)
    assert [pair for pair, n in pairs.items() if n > 1] == []


def test_states_are_the_known_ones():
    assert len(set(state_machine.STATES)) == len(state_machine.STATES)
    assert set(state_machine.STATES) == {
        'enroll', 'verifying', 'manageable', 'inspecting', 'inspect wait',
        'inspect failed', 'cleaning', 'clean wait',
        'clean failed', 'available', 'deploying', 'wait call-back',
        'deploy failed', 'active', 'deleting', 'error',
        'adopting', 'adopt failed'}


def test_transitions_only_use_known_states():
    used = {start for start, _e, _end in TRANSITIONS} | {
        end for _s, _e, end in TRANSITIONS}
    assert used - set(state_machine.STATES) == set()


def test_every_state_appears_in_a_transition():
    used = {start for start, _e, _end in TRANSITIONS} | {
        end for _s, _e, end in TRANSITIONS}
    assert set(state_machine.STATES) - used == set()


def test_every_event_is_an_api_verb_or_a_conductor_event():
    events = {event for _s, event, _e in TRANSITIONS}
    assert events - VERB_EVENTS - CONDUCTOR_EVENTS == set()


def test_state_groups_only_name_known_states():
    known = set(state_machine.STATES)
    groups = {
        'STABLE_STATES': set(states.STABLE_STATES),
        'FAILURE_STATES': set(states.FAILURE_STATES),
        'STUCK_STATES_TREATED_AS_FAIL': set(
            states.STUCK_STATES_TREATED_AS_FAIL) | set(
            states.STUCK_STATES_TREATED_AS_FAIL.values()),
        'WAIT_STATES': set(states.WAIT_STATES),
        'TARGETS': set(states.TARGETS) | set(states.TARGETS.values()),
    }
    assert {name: group - known for name, group in groups.items()
            if group - known} == {}


# ---- its shape --------------------------------------------------------------

def test_every_state_is_reachable_from_enroll():
    assert set(state_machine.STATES) - _reachable(states.ENROLL) == set()


def test_every_state_can_reach_a_stable_state():
    trapped = [state for state in state_machine.STATES
               if state not in states.STABLE_STATES
               and not _reachable(state) & states.STABLE_STATES]
    assert trapped == []


def test_every_stable_state_has_an_exit():
    assert [state for state in sorted(states.STABLE_STATES)
            if not _exits(state)] == []


@pytest.mark.parametrize('state', sorted(states.STUCK_STATES_TREATED_AS_FAIL))
def test_stuck_state_fail_edge_matches_recovery(state):
    # Recovery writes STUCK_STATES_TREATED_AS_FAIL[state] straight into the
    # database, bypassing the machine; it must be where 'fail' leads anyway.
    # (verifying -> enroll is deliberate: enroll is stable, not a failure.)
    assert _exits(state).get('fail') == (
        states.STUCK_STATES_TREATED_AS_FAIL[state])


@pytest.mark.parametrize('state', sorted(states.WAIT_STATES))
def test_wait_states_can_time_out(state):
    assert _exits(state).get('fail') in states.FAILURE_STATES


@pytest.mark.parametrize('state', sorted(states.FAILURE_STATES))
def test_failure_states_have_a_way_out(state):
    assert _exits(state), '%s has no way out' % state
    healthy = states.STABLE_STATES - states.FAILURE_STATES
    assert _reachable(state) & healthy, (
        '%s cannot get back to a healthy stable state' % state)


def test_every_transient_state_has_a_target():
    transient = set(state_machine.STATES) - states.STABLE_STATES
    assert transient - set(states.TARGETS) == set()


# ---- the helpers ------------------------------------------------------------

@pytest.mark.parametrize('state', state_machine.STATES)
def test_is_allowed_follows_the_table(state):
    expected = sorted(_exits(state))
    for event in expected:
        assert state_machine.is_allowed(state, event)
    for event in VERB_EVENTS | CONDUCTOR_EVENTS:
        if event not in expected:
            assert not state_machine.is_allowed(state, event)


def test_unknown_state_allows_nothing():
    assert not state_machine.is_allowed('no such state', 'manage')


@pytest.mark.parametrize('transition', EXPECTED_TRANSITIONS)
def test_process_event_follows_the_table(transition):
    start, event, end = transition
    machine = state_machine.new_machine(start)
    assert state_machine.process_event(machine, event, 'node-1') == end
    assert machine.current_state == end


def test_template_is_frozen():
    template = state_machine._TEMPLATE
    assert template.frozen
    with pytest.raises(automaton_exc.FrozenMachine):
        template.add_transition(states.ACTIVE, states.ENROLL, 'manage')
    with pytest.raises(automaton_exc.FrozenMachine):
        template.add_state('new state')
    assert not state_machine.is_allowed(states.ENROLL, 'deploy')


def test_task_machines_are_frozen_too():
    # A shallow copy shares the template's tables, so changing it would
    # change every machine: it must refuse.
    machine = state_machine.new_machine(states.ACTIVE)
    with pytest.raises(automaton_exc.FrozenMachine):
        machine.add_transition(states.ACTIVE, states.ENROLL, 'manage')
    assert state_machine.new_machine(states.ACTIVE).current_state == (
        states.ACTIVE)


def test_new_machine_starts_where_asked():
    for state in state_machine.STATES:
        assert state_machine.new_machine(state).current_state == state


def test_new_machines_are_independent():
    first = state_machine.new_machine(states.AVAILABLE)
    second = state_machine.new_machine(states.AVAILABLE)
    assert first is not second

    assert state_machine.process_event(first, 'deploy', 'node-1') == (
        states.DEPLOYING)
    assert first.current_state == states.DEPLOYING
    assert second.current_state == states.AVAILABLE
    assert state_machine.new_machine(states.AVAILABLE).current_state == (
        states.AVAILABLE)

    state_machine.process_event(second, 'manage', 'node-2')
    assert first.current_state == states.DEPLOYING
    assert second.current_state == states.MANAGEABLE
    assert state_machine._TEMPLATE.current_state is None


@pytest.mark.parametrize('event', ['provide', 'no-such-event'])
def test_bad_event_raises_invalid_state_requested(event):
    machine = state_machine.new_machine(states.ACTIVE)
    with pytest.raises(exception.InvalidStateRequested) as info:
        state_machine.process_event(machine, event, 'node-1')
    err = info.value
    assert err.state == states.ACTIVE
    assert err.action == event
    assert err.node == 'node-1'
    assert '"active"' in str(err)
    assert 'node-1' in str(err)
    assert err.code == 400
    assert machine.current_state == states.ACTIVE


# ---- the picture ------------------------------------------------------------

@pytest.fixture(scope='module')
def tool() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location('states_to_dot', TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_dot_file_is_current(tool):
    assert DOT_FILE.exists(), (
        '%s is missing; run `make states` (python tools/states_to_dot.py '
        '--dot doc/states.dot --svg doc/states.svg)' % DOT_FILE)
    assert DOT_FILE.read_text(encoding='utf-8') == tool.render_dot(), (
        'doc/states.dot does not match the transition table; run `make '
        'states` (python tools/states_to_dot.py --dot doc/states.dot --svg '
        'doc/states.svg) and commit the result')


def test_render_dot_is_deterministic_and_complete(tool):
    source = tool.render_dot()
    assert source == tool.render_dot()
    assert source.startswith('digraph ') and source.endswith('}\n')
    for state in state_machine.STATES:
        assert '    "%s" [' % state in source
    for start, event, end in TRANSITIONS:
        assert '"%s" -> "%s" [label="%s"' % (start, end, event) in source
    # One node line per state (plus the start marker), one edge per row.
    assert source.count(' -> ') == len(TRANSITIONS) + 1


def test_render_svg_without_dot_says_install_graphviz(tool, monkeypatch):
    monkeypatch.setattr(tool.shutil, 'which', lambda _name: None)
    with pytest.raises(RuntimeError, match='install graphviz'):
        tool.render_svg(tool.render_dot())


def test_cli_without_options_prints_dot(tool, capsys):
    assert tool.main([]) == 0
    assert capsys.readouterr().out == tool.render_dot()


# ---- the table is true: every event is fired by something real --------------

def _fired_literals() -> set[str]:
    """Events passed as a literal to ``process_event`` anywhere in ferrum/."""
    import ast
    fired = set()
    for path in (REPO_ROOT / 'ferrum').rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == 'process_event' and node.args
                    and isinstance(node.args[0], ast.Constant)):
                fired.add(node.args[0].value)
            # ``'manage' if ... else 'done'`` as the event
            if (isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == 'process_event' and node.args
                    and isinstance(node.args[0], ast.IfExp)):
                for branch in (node.args[0].body, node.args[0].orelse):
                    if isinstance(branch, ast.Constant):
                        fired.add(branch.value)
    return fired


def test_every_conductor_event_is_fired_somewhere():
    # A transition nothing fires is a promise the conductor does not keep
    # (as the hold states were): add the code that fires it, or remove it.
    events = {event for _s, event, _e in TRANSITIONS}
    assert events & CONDUCTOR_EVENTS == CONDUCTOR_EVENTS
    assert CONDUCTOR_EVENTS - _fired_literals() == set()


def test_every_verb_event_is_fired_by_its_verb():
    events = {event for _s, event, _e in TRANSITIONS}
    # The verbs fire their own event (or, for rebuild, a computed one).
    assert events - CONDUCTOR_EVENTS - VERB_EVENTS == set()
    assert VERB_EVENTS - events == set()
