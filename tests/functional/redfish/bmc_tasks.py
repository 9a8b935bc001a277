# SPDX-License-Identifier: Apache-2.0
"""Helpers of the task-monitor tests: a node behind the recording proxy
cleaning with ``management.set_bmc_clock``, and one periodic run."""

from ferrum.common import states
from ferrum.conductor import service
from ferrum.drivers.redfish import management
from ferrum.testing.flows import settled

TIME = '2026-11-28T09:30:00+01:00'


def manager_path(system):
    return '/redfish/v1/Managers/%s' % system


def start_conductor(conf, db, **kwargs):
    svc = service.ConductorService(conf, db=db, **kwargs)
    svc.start(start_periodics=False)
    return svc


def poll(svc):
    """One run of the polling task, as the periodic worker makes it."""
    found = [obj for obj in svc.ctx.drivers.all_interface_objects()
             if isinstance(obj, management.RedfishManagement)]
    found[0].poll_redfish_tasks(svc.ctx)


def enroll_manageable(svc, db, emulator, proxy, system):
    node = svc.manager.create_node({
        'driver': 'redfish',
        'driver_info': emulator.driver_info(system,
                                            redfish_address=proxy.url)})
    svc.manager.do_provisioning_action(node.uuid, 'manage')
    return settled(db, node.id, states.MANAGEABLE, timeout=60)


def clock_steps(**args):
    """The provision arguments of a manual clean setting the BMC clock."""
    return {'clean_steps': [{'interface': 'management',
                             'step': 'set_bmc_clock',
                             'args': dict({'target_datetime': TIME},
                                          **args)}]}


def clean_clock(svc, db, emulator, proxy, system, script=None, **args):
    """A manageable node behind the proxy, cleaning with set_bmc_clock;
    the proxy answers it with ``script``'s task monitor, if given."""
    node = enroll_manageable(svc, db, emulator, proxy, system)
    if script is not None:
        proxy.answer_with_task('PATCH', manager_path(system), script)
    svc.manager.do_provisioning_action(node.uuid, 'clean', clock_steps(**args))
    return node


def waiting(db, node):
    found = settled(db, node.id, states.CLEANWAIT, timeout=60)
    assert found.last_error is None
    return found
