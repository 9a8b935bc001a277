# SPDX-License-Identifier: Apache-2.0
"""The driver contract: what the conductor calls on an interface, and when.

A node's *driver* is a hardware type (see :mod:`ferrum.drivers.hardware_type`)
composed of one implementation per interface kind (:data:`INTERFACES`):
power, management, boot, deploy, inspect, vendor, network and firmware.
Each implementation is a subclass of one of the abstract classes of
:mod:`ferrum.drivers.interfaces` (one module per kind, each class
re-exported here: import this module), registered under the entry-point
namespace ``ferrum.hardware.interfaces.<kind>``.

Rules every implementation follows:

* One instance of each enabled interface serves every node of the conductor,
  from many threads at once: keep per-node state in the node
  (``driver_internal_info``), never on ``self``.
* Every method receives a :class:`Task` whose ``node`` is the node to act
  on. The docstring of each method says which lock the conductor holds
  when it calls it: *exclusive* means no other task can change the node
  meanwhile, and the method may change it; *shared* means it must only
  read (or call ``task.upgrade_lock()`` first).
* Raise :class:`ferrum.common.exception.DriverError` (or a subclass) with a
  message that says what failed and what to do. In a flow (the work the
  conductor runs on a worker: deploy, clean, tear down, inspect, power
  changes, vendor methods marked asynchronous) it becomes the node's
  ``last_error`` and one log line; any other exception is treated as a bug
  in the driver: the node fails the same way, and the log gets the
  traceback. A method the API calls and waits for (``validate``, boot
  devices, VIFs, ``heartbeat``, synchronous vendor methods) raises to the
  client instead: the exception's ``code`` is the HTTP status, so raise
  one that says what the client can do (400 for bad input, 409 for a
  refusal, 503 for hardware that does not answer).
* Never log or put into an exception a value of ``driver_info`` whose key
  contains ``password`` or is listed in the interface's
  ``secret_properties``.
* Methods that start long operations may return a *wait* state
  (``DEPLOYWAIT``, ``CLEANWAIT``, ``INSPECTWAIT``; see each method): the
  conductor then releases the lock and the node waits. The driver ends the
  wait with ``task.resume()`` under an exclusive lock (or, when the work
  failed, ``task.fail(error)``), from any of three
  places: its own periodic task (``@node_periodic``), a vendor passthru
  method (``POST /v1/nodes/{node}/vendor_passthru``), or
  :meth:`DeployInterface.heartbeat` (``POST /v1/heartbeat/{node}``, which
  a ramdisk agent calls). A wait that nobody ends fails after its
  ``[conductor]*_callback_timeout`` (``inspect_wait_timeout``), whose
  ``last_error`` repeats what the driver said the node awaits, if it put
  that in ``driver_internal_info[AWAITING]`` ("the agent to finish deploy
  step deploy.write_image"). After
  ``task.upgrade_lock()`` the node is read again: check that it still
  waits before ``task.resume()`` or ``task.fail()`` (an abort or the
  timeout may have moved it meanwhile).
"""

import dataclasses
from collections.abc import Iterator

from ferrum.conf import default as default_conf
from ferrum.drivers import task as task_mod
from ferrum.drivers.interfaces import BaseInterface
from ferrum.drivers.interfaces.boot import BootInterface
from ferrum.drivers.interfaces.deploy import DeployInterface
from ferrum.drivers.interfaces.firmware import Component as FirmwareComponent
from ferrum.drivers.interfaces.firmware import FirmwareInterface
from ferrum.drivers.interfaces.inspect import InspectInterface
from ferrum.drivers.interfaces.management import ManagementInterface
from ferrum.drivers.interfaces.network import NetworkInterface
from ferrum.drivers.interfaces.power import PowerInterface
from ferrum.drivers.interfaces.vendor import PassthruSpec
from ferrum.drivers.interfaces.vendor import VendorInterface
from ferrum.drivers.interfaces.vendor import passthru
from ferrum.drivers.task import ConductorView

__all__ = ['AWAITING', 'BaseInterface', 'BootInterface', 'ConductorView',
           'DeployInterface', 'Driver', 'FirmwareComponent',
           'FirmwareInterface', 'INTERFACES', 'InspectInterface',
           'ManagementInterface', 'NetworkInterface', 'PassthruSpec',
           'PowerInterface', 'Task', 'VendorInterface',
           'automated_clean_enabled', 'passthru']

#: The ``driver_internal_info`` key where a driver says, in words, what a
#: waiting node awaits: the callback timeout's message repeats it.
AWAITING = 'awaiting'

#: The interface kinds, in the order a node lists them, with their bases.
#: The kinds are named once, by the options that enable them.
INTERFACES: dict[str, type] = dict(zip(default_conf.INTERFACE_KINDS, (
    PowerInterface, ManagementInterface, BootInterface, DeployInterface,
    InspectInterface, VendorInterface, NetworkInterface, FirmwareInterface),
    strict=True))


@dataclasses.dataclass(frozen=True)
class Driver:
    """The interfaces one node uses, resolved from its interface fields."""

    hardware_type: str
    power: PowerInterface
    management: ManagementInterface
    boot: BootInterface
    deploy: DeployInterface
    inspect: InspectInterface
    vendor: VendorInterface
    network: NetworkInterface
    firmware: FirmwareInterface

    def interfaces(self) -> Iterator[tuple[str, BaseInterface]]:
        for kind in INTERFACES:
            yield kind, getattr(self, kind)


#: The task a driver method receives (see :class:`ferrum.drivers.task.Task`),
#: its ``driver`` this module's :class:`Driver`: type methods against it.
Task = task_mod.Task[Driver]


def automated_clean_enabled(task: Task) -> bool:
    """Whether the conductor cleans the node on ``provide`` and after
    ``tear_down``: the node's ``automated_clean``, or else
    ``[conductor] automated_clean``."""
    if task.node.automated_clean is not None:
        return bool(task.node.automated_clean)
    return bool(task.ctx.conf.conductor.automated_clean)
