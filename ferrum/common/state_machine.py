# SPDX-License-Identifier: Apache-2.0
"""The provision state machine: a literal transition table, built once.

The table below *is* the machine. It is built into an automaton
``FiniteMachine`` at import time (it needs no configuration), frozen, and
every task works on its own shallow copy, initialised to the node's state.
A golden test pins the table; ``tools/states_to_dot.py`` draws it.

This is also the one module that talks to automaton: its exceptions are
translated into :class:`ferrum.common.exception.InvalidStateRequested`.
"""

from automaton import exceptions as automaton_exc
from automaton import machines

from ferrum.common import exception
from ferrum.common import states as s

#: (from state, event, to state). Events are the provision verbs' (see
#: conductor/provisioning.py) and the conductor's own done/fail/wait/resume.
TRANSITIONS: tuple[tuple[str, str, str], ...] = (
    # Enrolment: check that the conductor can talk to the BMC.
    (s.ENROLL, 'manage', s.VERIFYING),
    (s.VERIFYING, 'done', s.MANAGEABLE),
    (s.VERIFYING, 'fail', s.ENROLL),
    # Manageable is where an operator works on a node.
    (s.MANAGEABLE, 'provide', s.CLEANING),  # automated clean, then available
    (s.MANAGEABLE, 'clean', s.CLEANING),  # manual clean, back to manageable
    (s.MANAGEABLE, 'inspect', s.INSPECTING),
    (s.MANAGEABLE, 'adopt', s.ADOPTING),
    # Inspection.
    (s.INSPECTING, 'done', s.MANAGEABLE),
    (s.INSPECTING, 'wait', s.INSPECTWAIT),
    (s.INSPECTING, 'fail', s.INSPECTFAIL),
    (s.INSPECTWAIT, 'done', s.MANAGEABLE),
    (s.INSPECTWAIT, 'resume', s.INSPECTING),
    (s.INSPECTWAIT, 'fail', s.INSPECTFAIL),
    (s.INSPECTWAIT, 'abort', s.INSPECTFAIL),
    (s.INSPECTFAIL, 'manage', s.MANAGEABLE),
    (s.INSPECTFAIL, 'inspect', s.INSPECTING),
    # Cleaning, automated (ends in available) or manual (ends in manageable).
    (s.CLEANING, 'done', s.AVAILABLE),
    (s.CLEANING, 'manage', s.MANAGEABLE),
    (s.CLEANING, 'wait', s.CLEANWAIT),
    (s.CLEANING, 'fail', s.CLEANFAIL),
    (s.CLEANWAIT, 'resume', s.CLEANING),
    (s.CLEANWAIT, 'fail', s.CLEANFAIL),
    (s.CLEANWAIT, 'abort', s.CLEANFAIL),
    (s.CLEANFAIL, 'manage', s.MANAGEABLE),
    # Available nodes wait for a deploy.
    (s.AVAILABLE, 'deploy', s.DEPLOYING),
    (s.AVAILABLE, 'manage', s.MANAGEABLE),
    # Deployment.
    (s.DEPLOYING, 'done', s.ACTIVE),
    (s.DEPLOYING, 'wait', s.DEPLOYWAIT),
    (s.DEPLOYING, 'fail', s.DEPLOYFAIL),
    (s.DEPLOYWAIT, 'resume', s.DEPLOYING),
    (s.DEPLOYWAIT, 'fail', s.DEPLOYFAIL),
    (s.DEPLOYWAIT, 'abort', s.DEPLOYFAIL),
    (s.DEPLOYWAIT, 'delete', s.DELETING),
    (s.DEPLOYFAIL, 'rebuild', s.DEPLOYING),
    (s.DEPLOYFAIL, 'deploy', s.DEPLOYING),
    (s.DEPLOYFAIL, 'delete', s.DELETING),
    # Active nodes are rebuilt or torn down.
    (s.ACTIVE, 'rebuild', s.DEPLOYING),
    (s.ACTIVE, 'delete', s.DELETING),
    # Tear-down hands over to automated cleaning.
    (s.DELETING, 'clean', s.CLEANING),
    (s.DELETING, 'fail', s.ERROR),
    (s.ERROR, 'rebuild', s.DEPLOYING),
    (s.ERROR, 'delete', s.DELETING),
    # Adoption of a node that is already running a workload.
    (s.ADOPTING, 'done', s.ACTIVE),
    (s.ADOPTING, 'fail', s.ADOPTFAIL),
    (s.ADOPTFAIL, 'adopt', s.ADOPTING),
    (s.ADOPTFAIL, 'manage', s.MANAGEABLE),
)

STATES: tuple[str, ...] = (
    s.ENROLL, s.VERIFYING, s.MANAGEABLE, s.INSPECTING, s.INSPECTWAIT,
    s.INSPECTFAIL, s.CLEANING, s.CLEANWAIT, s.CLEANFAIL,
    s.AVAILABLE, s.DEPLOYING, s.DEPLOYWAIT, s.DEPLOYFAIL,
    s.ACTIVE, s.DELETING, s.ERROR, s.ADOPTING, s.ADOPTFAIL,
)


def _build() -> machines.FiniteMachine:
    machine = machines.FiniteMachine()
    for state in STATES:
        machine.add_state(state)
    for start, event, end in TRANSITIONS:
        machine.add_transition(start, end, event)
    machine.default_start_state = s.ENROLL
    machine.freeze()
    return machine


_TEMPLATE = _build()


def new_machine(state: str) -> machines.FiniteMachine:
    """A machine of its own for one task, positioned at ``state``."""
    machine = _TEMPLATE.copy(shallow=True)
    machine.initialize(start_state=state)
    return machine


def is_allowed(state: str, event: str) -> bool:
    """Whether ``event`` may be fired in ``state`` (a cheap pre-check)."""
    return any(ev == event for _start, ev, _end in _INDEX.get(state, ()))


def process_event(machine: machines.FiniteMachine, event: str,
                  node: str) -> str:
    """Fire ``event`` on ``machine`` and return the new state."""
    try:
        machine.process_event(event)
    except (automaton_exc.NotFound, automaton_exc.InvalidState):
        raise exception.InvalidStateRequested(
            action=event, node=node, state=machine.current_state) from None
    return str(machine.current_state)


_INDEX: dict[str, list[tuple[str, str, str]]] = {}
for _t in TRANSITIONS:
    _INDEX.setdefault(_t[0], []).append(_t)
