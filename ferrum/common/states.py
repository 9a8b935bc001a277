# SPDX-License-Identifier: Apache-2.0
"""Provision and power state names, and named groups of them. No logic here.

The names are Ironic's, so clients that compare state strings keep working.
The transition table lives in :mod:`ferrum.common.state_machine`.
"""

# ---- stable provision states ----
ENROLL = 'enroll'
MANAGEABLE = 'manageable'
AVAILABLE = 'available'
ACTIVE = 'active'
ERROR = 'error'

# ---- transient and failure provision states ----
VERIFYING = 'verifying'
INSPECTING = 'inspecting'
INSPECTWAIT = 'inspect wait'
INSPECTFAIL = 'inspect failed'
CLEANING = 'cleaning'
CLEANWAIT = 'clean wait'
CLEANFAIL = 'clean failed'
DEPLOYING = 'deploying'
DEPLOYWAIT = 'wait call-back'
DEPLOYFAIL = 'deploy failed'
DELETING = 'deleting'
ADOPTING = 'adopting'
ADOPTFAIL = 'adopt failed'

STABLE_STATES = frozenset({ENROLL, MANAGEABLE, AVAILABLE, ACTIVE, ERROR})

FAILURE_STATES = frozenset({
    INSPECTFAIL, CLEANFAIL, DEPLOYFAIL, ADOPTFAIL, ERROR})

#: States in which a conductor is doing work on the node, with the state the
#: node goes to when that conductor dies or stops before finishing.
STUCK_STATES_TREATED_AS_FAIL = {
    VERIFYING: ENROLL,
    INSPECTING: INSPECTFAIL,
    CLEANING: CLEANFAIL,
    DEPLOYING: DEPLOYFAIL,
    DELETING: ERROR,
    ADOPTING: ADOPTFAIL,
}

#: States waiting for an external event (a driver callback); see
#: conductor/timeouts.py for which of them time out.
WAIT_STATES = frozenset({DEPLOYWAIT, CLEANWAIT, INSPECTWAIT})

#: States in which a ramdisk agent may run on the node: ``/v1/lookup``
#: finds only such nodes, and only they take heartbeats.
AGENT_STATES = frozenset({DEPLOYING, DEPLOYWAIT, CLEANING, CLEANWAIT,
                          INSPECTING, INSPECTWAIT})

#: A node may be deleted in these states without maintenance.
DELETE_ALLOWED_STATES = frozenset({ENROLL, MANAGEABLE, ADOPTFAIL})

#: Node fields other than state may be updated in these states.
UPDATE_ALLOWED_STATES = frozenset({
    ENROLL, MANAGEABLE, AVAILABLE, INSPECTFAIL, CLEANFAIL, DEPLOYFAIL,
    ADOPTFAIL, INSPECTWAIT, ERROR})

#: The target provision state shown while a node is in a transient state.
TARGETS = {
    VERIFYING: MANAGEABLE, INSPECTING: MANAGEABLE, INSPECTWAIT: MANAGEABLE,
    INSPECTFAIL: MANAGEABLE,
    CLEANING: AVAILABLE, CLEANWAIT: AVAILABLE,
    CLEANFAIL: AVAILABLE, DELETING: AVAILABLE,
    DEPLOYING: ACTIVE, DEPLOYWAIT: ACTIVE,
    DEPLOYFAIL: ACTIVE, ADOPTING: ACTIVE, ADOPTFAIL: ACTIVE,
}

# ---- power states ----
POWER_ON = 'power on'
POWER_OFF = 'power off'
REBOOT = 'rebooting'
SOFT_POWER_OFF = 'soft power off'
SOFT_REBOOT = 'soft rebooting'
#: The driver answered, but could not tell the state.
POWER_ERROR = 'error'

# ---- faults ----
FAULT_POWER_FAILURE = 'power failure'
FAULT_CLEAN_FAILURE = 'clean failure'
