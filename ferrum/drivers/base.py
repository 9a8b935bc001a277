# SPDX-License-Identifier: Apache-2.0
"""The driver contract: what the conductor calls on an interface, and when.

A node's *driver* is a hardware type (see :mod:`ferrum.drivers.hardware_type`)
composed of one implementation per interface kind: power, management, boot,
deploy, inspect, vendor and network. Each implementation is a subclass of one of the
abstract classes below, registered under the entry-point namespace
``ferrum.hardware.interfaces.<kind>``.

Rules every implementation follows:

* One instance of each enabled interface serves every node of the conductor,
  from many threads at once: keep per-node state in the node
  (``driver_internal_info``), never on ``self``.
* Every method receives a :class:`ferrum.conductor.task_manager.Task` whose
  ``node`` is the node to act on. The docstring of each method says which
  lock the conductor holds when it calls it: *exclusive* means no other task
  can change the node meanwhile, and the method may change it; *shared*
  means it must only read.
* Raise :class:`ferrum.common.exception.DriverError` (or a subclass) with a
  message that says what failed and what to do; it becomes the node's
  ``last_error``. Any other exception is treated the same way, but its
  message may be less helpful to an operator.
* Never log or put into an exception a value of ``driver_info`` whose key
  contains ``password`` or is listed in the interface's
  ``secret_properties``.
* Methods that start long operations may return a *wait* state (see each
  method): the conductor then releases the lock and waits for
  ``continue_*`` (the deploy or clean step finished asynchronously) or for the
  callback timeout.
"""

import abc
from typing import TYPE_CHECKING, Any

from ferrum.drivers import steps

if TYPE_CHECKING:
    from oslo_config import cfg

    from ferrum.conductor.task_manager import Task


class BaseInterface(abc.ABC):
    """Common base of all interfaces."""

    #: The interface kind, one of ferrum.conf.default.INTERFACE_KINDS.
    kind: str = ''

    #: ``driver_info`` keys whose values are secrets (tokens, keys,
    #: community strings) beyond those whose name contains "password",
    #: which are always secret. The API shows their values as ``******``
    #: on every node that uses this interface, and neither ferrum nor the
    #: interface may log them or put them into an exception. Read by the
    #: conductor once at start-up, without a node or lock, and registered
    #: in the database for the API; a change takes effect when the
    #: conductors restart. List the keys in ``get_properties`` too.
    secret_properties: frozenset[str] = frozenset()

    def check_configuration(self, conf: 'cfg.ConfigOpts') -> None:
        """Check this interface's own options, once, at conductor start.

        Called for every enabled interface before the conductor registers,
        without a node or lock. Raise a
        :class:`~ferrum.common.exception.FerrumException` naming the option
        and what to set: the conductor then refuses to start, naming the
        entry point. Must not block on the hardware or a remote service
        (check reachability in the background, and only warn: it may be
        down for a while). The default checks nothing.
        """

    def get_properties(self) -> dict[str, str]:
        """The ``driver_info`` keys this interface reads, with a description.

        Called by the conductor once at start-up, without a node or lock;
        the result is registered in the database, and the API serves it
        (``GET /v1/drivers/<name>/properties`` for a hardware type's default
        interfaces) without loading drivers. Mark required keys by starting
        the description with "Required.".
        """
        return {}

    @abc.abstractmethod
    def validate(self, task: 'Task') -> None:
        """Check that the node's ``driver_info`` is enough for this interface.

        Called with a shared lock before any operation that uses the
        interface, and by ``/validate``. Must not contact the hardware and
        must be idempotent.

        :raises MissingParameterValue: a required ``driver_info`` key is
            missing (name it).
        :raises InvalidParameterValue: a value is wrong (say which and why).
        """

    def get_clean_steps(self, task: 'Task') -> list[dict[str, Any]]:
        """The clean steps of this interface (those marked ``@clean_step``).

        Called with an exclusive lock when cleaning starts. Override to
        change priorities per node.
        """
        return steps.collect(self, self.kind)

    def execute_clean_step(self, task: 'Task',
                           step: dict[str, Any]) -> str | None:
        """Run one clean step.

        Called with an exclusive lock, in the order cleaning computed.

        :returns: None when the step is done, or ``states.CLEANWAIT`` when it
            continues asynchronously: the driver then calls
            ``ConductorManager.continue_cleaning`` when it finishes.
        """
        method = getattr(self, step['step'])
        result: str | None = method(task, **(step.get('args') or {}))
        return result


class PowerInterface(BaseInterface):
    """Reads and changes a node's power state."""

    kind = 'power'

    @abc.abstractmethod
    def get_power_state(self, task: 'Task') -> str:
        """Ask the hardware for the current power state.

        Called with a shared lock by the power-state sync periodic and with
        an exclusive one during flows. Idempotent, no side effects.

        :returns: ``states.POWER_ON``, ``POWER_OFF`` or ``POWER_ERROR``.
        :raises DriverError: the BMC could not be reached.
        """

    @abc.abstractmethod
    def set_power_state(self, task: 'Task', power_state: str,
                        timeout: int | None = None) -> None:
        """Turn the node on or off and return once it is in that state.

        Called with an exclusive lock. Must be idempotent: setting the
        current state again is a success.

        :param power_state: ``states.POWER_ON``, ``POWER_OFF`` or, when listed
            by get_supported_power_states, ``SOFT_POWER_OFF``.
        :param timeout: seconds to wait for the state to be reached; None
            means ``[conductor]power_state_change_timeout``.
        :raises PowerStateFailure: the state was not reached in time.
        """

    @abc.abstractmethod
    def reboot(self, task: 'Task', timeout: int | None = None) -> None:
        """Power-cycle the node (power it on if it was off).

        Called with an exclusive lock. Returns once the node is on.
        """

    def get_supported_power_states(self, task: 'Task') -> list[str]:
        """The power states ``set_power_state`` and ``reboot`` accept."""
        from ferrum.common import states
        return [states.POWER_ON, states.POWER_OFF, states.REBOOT]


class ManagementInterface(BaseInterface):
    """Boot device and other out-of-band management."""

    kind = 'management'

    @abc.abstractmethod
    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        """Boot devices this node can be set to (``pxe``, ``disk``, ...).

        Called with a shared lock; must not contact the hardware if it can
        be avoided.
        """

    @abc.abstractmethod
    def set_boot_device(self, task: 'Task', device: str,
                        persistent: bool = False) -> None:
        """Set the boot device for the next boot (or all, if persistent).

        Called with an exclusive lock. Idempotent.
        """

    @abc.abstractmethod
    def get_boot_device(self, task: 'Task') -> dict[str, Any]:
        """``{'boot_device': str | None, 'persistent': bool | None}``.

        Called with a shared lock.
        """


class BootInterface(BaseInterface):
    """Prepares how the node boots: ramdisk for deploy/clean, then instance."""

    kind = 'boot'

    @abc.abstractmethod
    def prepare_ramdisk(self, task: 'Task') -> None:
        """Set the node up to boot the deploy/clean ramdisk.

        Called with an exclusive lock by the deploy interface. Idempotent.
        """

    @abc.abstractmethod
    def clean_up_ramdisk(self, task: 'Task') -> None:
        """Undo prepare_ramdisk. Exclusive lock; idempotent."""

    @abc.abstractmethod
    def prepare_instance(self, task: 'Task') -> None:
        """Set the node up to boot the deployed instance. Exclusive lock."""

    @abc.abstractmethod
    def clean_up_instance(self, task: 'Task') -> None:
        """Undo prepare_instance. Exclusive lock; idempotent."""


class DeployInterface(BaseInterface):
    """Puts a workload on the node, takes it off, and drives cleaning."""

    kind = 'deploy'

    @abc.abstractmethod
    def prepare(self, task: 'Task') -> None:
        """Get the node ready for ``deploy``: allocate resources it needs.

        Called with an exclusive lock in ``deploying``, before ``deploy``;
        also at take-over, in ``active`` (see take_over), where only what
        the running workload needs from this conductor is to be prepared
        (its instance boot, not a deploy ramdisk). Must be idempotent: a
        failed deploy is retried by calling it again.
        """

    @abc.abstractmethod
    def deploy(self, task: 'Task') -> str | None:
        """Put the workload on the node.

        Called with an exclusive lock in ``deploying``, after ``prepare``.

        :returns: None when the node is deployed (it goes ``active``), or
            ``states.DEPLOYWAIT`` when deployment goes on asynchronously: the
            driver calls ``ConductorManager.continue_deploy`` when it is done,
            or the node fails after ``[conductor]deploy_callback_timeout``.
        """

    @abc.abstractmethod
    def tear_down(self, task: 'Task') -> None:
        """Take the workload off the node (typically: power it off).

        Called with an exclusive lock in ``deleting``. Must be idempotent:
        it also runs after a failed or half-done deploy.
        """

    @abc.abstractmethod
    def clean_up(self, task: 'Task') -> None:
        """Release what ``prepare`` allocated.

        Called with an exclusive lock after ``tear_down`` and when a deploy
        is aborted or fails. Idempotent.
        """

    def take_over(self, task: 'Task') -> None:
        """Adopt an ``active`` node another conductor set up.

        Called with an exclusive lock, right after ``prepare``, by the
        conductor the hash ring now gives the node to: its previous
        conductor died or stopped, or a new conductor joined. Also called
        when a node is adopted. Rebuild whatever per-conductor state the
        deploy needs (boot files, console); the workload keeps running.
        Idempotent. The default does nothing.

        Raising leaves the node ``active`` with ``last_error`` set; the
        take-over is retried every ``[conductor]sync_local_state_interval``
        seconds until it succeeds.
        """

    def prepare_cleaning(self, task: 'Task') -> str | None:
        """Get the node ready to run clean steps.

        Called with an exclusive lock when cleaning starts, before any step.

        :returns: None, or ``states.CLEANWAIT`` when preparation goes on
            asynchronously (the driver then calls ``continue_cleaning``).
        """
        return None

    def tear_down_cleaning(self, task: 'Task') -> None:
        """Undo ``prepare_cleaning``.

        Called with an exclusive lock when cleaning ends, *whether it
        succeeded or failed*. Idempotent.
        """


class InspectInterface(BaseInterface):
    """Discovers the node's hardware properties."""

    kind = 'inspect'

    @abc.abstractmethod
    def inspect_hardware(self, task: 'Task') -> str | None:
        """Fill ``node.properties`` from the hardware.

        Called with an exclusive lock in ``inspecting``.

        :returns: None when done, or ``states.INSPECTWAIT`` when inspection
            goes on asynchronously.
        """


class VendorInterface(BaseInterface):
    """Vendor-specific extensions (passthru). Optional."""

    kind = 'vendor'


class NetworkInterface(BaseInterface):
    """Connects the node to networks: attaches and detaches VIFs.

    A VIF (virtual interface) is a port of a networking service, named by
    its ID, that the node's physical ports are to be plugged into, as
    Ironic's ``/v1/nodes/{node}/vifs`` API manages them.
    :mod:`ferrum.drivers.vifs` records VIFs where Ironic does (a port's
    ``internal_info['tenant_vif_port_id']``); an implementation that
    programs a real network calls it and then does its own work.
    """

    kind = 'network'

    @abc.abstractmethod
    def vif_list(self, task: 'Task') -> list[dict[str, Any]]:
        """The VIFs attached to the node: ``[{"id": ...}, ...]``.

        Called with a shared lock (``GET /v1/nodes/{node}/vifs``). Must not
        change anything.
        """

    @abc.abstractmethod
    def vif_attach(self, task: 'Task', vif_info: dict[str, Any]) -> None:
        """Attach the VIF ``vif_info['id']`` to the node.

        Called with an exclusive lock (``POST /v1/nodes/{node}/vifs``), in
        any provision state. ``vif_info`` is the request body: ``id``, and
        optionally ``port_uuid`` (the port to use).

        :raises VifAlreadyAttached: the VIF is attached to this node (409).
        :raises NoFreePhysicalPorts, InvalidParameterValue: it cannot be
            attached as asked (400).
        """

    @abc.abstractmethod
    def vif_detach(self, task: 'Task', vif_id: str) -> None:
        """Detach the VIF ``vif_id`` from the node.

        Called with an exclusive lock (``DELETE
        /v1/nodes/{node}/vifs/{vif}``), in any provision state.

        :raises VifNotAttached: it is not attached to this node (400).
        """
