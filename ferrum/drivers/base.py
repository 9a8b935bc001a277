# SPDX-License-Identifier: Apache-2.0
"""The driver contract: what the conductor calls on an interface, and when.

A node's *driver* is a hardware type (see :mod:`ferrum.drivers.hardware_type`)
composed of one implementation per interface kind (:data:`INTERFACES`):
power, management, boot, deploy, inspect, vendor and network. Each
implementation is a subclass of one of the abstract classes below,
registered under the entry-point namespace
``ferrum.hardware.interfaces.<kind>``.

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
  wait with ``task.resume()`` under an exclusive lock, from any of three
  places: its own periodic task (``@node_periodic``), a vendor passthru
  method (``POST /v1/nodes/{node}/vendor_passthru``), or
  :meth:`DeployInterface.heartbeat` (``POST /v1/heartbeat/{node}``, which
  a ramdisk agent calls). A wait that nobody ends fails after its
  ``[conductor]*_callback_timeout`` (``inspect_wait_timeout``). After
  ``task.upgrade_lock()`` the node is read again: check that it still
  waits before ``task.resume()`` (an abort or the timeout may have moved
  it meanwhile).
"""

import abc
import dataclasses
import datetime
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ferrum.drivers import steps
from ferrum.periodic import decorators

if TYPE_CHECKING:
    from oslo_config import cfg

    from ferrum.db import api as db_api
    from ferrum.objects import node as node_obj


class ConductorView(decorators.Conductor, Protocol):
    """What a driver may use of the conductor that runs it (``task.ctx``).

    Besides ``conf``, ``host`` and ``each_node`` (see
    :class:`ferrum.periodic.decorators.Conductor`): the database, the clock
    and the sleep, which tests replace, so drivers should use these rather
    than ``time``.
    """

    @property
    def db(self) -> 'db_api.Database':
        """The conductor's database (for objects' class methods)."""

    @property
    def clock(self) -> Callable[[], datetime.datetime]:
        """Returns "now" as naive UTC."""

    @property
    def sleep(self) -> Callable[[float], None]:
        """Sleeps for the given seconds (instant in tests)."""


class Task(Protocol):
    """The task a driver method receives: one node, under its lock.

    The conductor's :class:`ferrum.conductor.task_manager.Task` is the one
    implementation; drivers depend on this description only.
    """

    @property
    def node(self) -> 'node_obj.Node':
        """The node; changes are written when the task releases its lock."""

    @property
    def driver(self) -> 'Driver':
        """The node's interfaces."""

    @property
    def ctx(self) -> ConductorView:
        """The conductor running the task."""

    @property
    def shared(self) -> bool:
        """True for a shared (read-only) task."""

    @property
    def purpose(self) -> str:
        """What the task is for, in words, as logs show it."""

    def upgrade_lock(self) -> None:
        """Take the exclusive lock (re-reading the node) if not held yet.

        :raises NodeLocked: another task holds the node.
        """

    def process_event(self, event: str, last_error: str | None = None,
                      target_state: str | None = None) -> str:
        """Fire a state-machine event; needs the exclusive lock."""

    def spawn_after(self, func: Callable[..., Any], *args: Any) -> None:
        """Run ``func(*args)`` on a worker once the task's block ends."""

    def resume(self) -> None:
        """End the node's wait: the asynchronous work is done.

        Needs the exclusive lock, and the node in ``wait call-back``
        (the deploy goes ``active``), ``clean wait`` (cleaning goes on with
        the next step) or ``inspect wait`` (inspection ends in
        ``manageable``). The rest runs on a worker after the task's block.

        :raises InvalidStateRequested: the node is not waiting.
        """

    def start(self, verb: str,
              args: Mapping[str, Any] | None = None) -> None:
        """Start a provision verb (``provide``, ``manage``, ...) on the node.

        The same verbs, checks and flows as ``PUT .../states/provision``;
        needs the exclusive lock. The work runs after the task's block.

        :raises InvalidStateRequested: the verb is not allowed now.
        """


class BaseInterface(abc.ABC):
    """Common base of all interfaces."""

    #: The interface kind, a key of INTERFACES (at the end of this module).
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
        return None

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
            continues asynchronously: the driver calls ``task.resume()``
            when it finishes (see the module's rules), and the next step
            runs.
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
            driver calls ``task.resume()`` when it is done (see the module's
            rules), or the node fails after
            ``[conductor]deploy_callback_timeout``.
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

        Called with an exclusive lock after ``tear_down``, and when a deploy
        fails (``prepare`` or ``deploy`` raised), times out in ``wait
        call-back`` or is aborted there: the node then goes to ``deploy
        failed``. Idempotent; what it raises is added to ``last_error``.
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
            asynchronously (the driver then calls ``task.resume()``).
        """
        return None

    def tear_down_cleaning(self, task: 'Task') -> None:
        """Undo ``prepare_cleaning``.

        Called with an exclusive lock when cleaning ends, *whether it
        succeeded or failed*. Idempotent.
        """

    def heartbeat(self, task: 'Task', callback_url: str,
                  agent_version: str | None) -> None:
        """A ramdisk agent on the node says it is alive (and where).

        Called with a *shared* lock for ``POST /v1/heartbeat/{node}``, which
        an agent found the node through ``GET /v1/lookup``; only while the
        node is deploying, cleaning or inspecting (or waiting in one of
        those). An agent-driven deploy interface reads the agent's progress
        at ``callback_url``, and when the work it waits for is done calls
        ``task.upgrade_lock()`` and ``task.resume()``. Must be quick: it
        runs in the API request. The default refuses heartbeats (400).

        The heartbeat API is public, as in Ironic, and ferrum does not yet
        check agent tokens: do not take ``callback_url`` or a heartbeat's
        arrival as proof; confirm the progress with the agent or the
        hardware before resuming.

        :raises HeartbeatNotSupported: this interface takes no heartbeats.
        """
        from ferrum.common import exception
        raise exception.HeartbeatNotSupported(
            node=task.node.uuid, interface=type(self).__name__)


class InspectInterface(BaseInterface):
    """Discovers the node's hardware properties."""

    kind = 'inspect'

    @abc.abstractmethod
    def inspect_hardware(self, task: 'Task') -> str | None:
        """Fill ``node.properties`` from the hardware.

        Called with an exclusive lock in ``inspecting``.

        :returns: None when done, or ``states.INSPECTWAIT`` when inspection
            goes on asynchronously: the driver fills ``node.properties``
            and calls ``task.resume()`` when it is done (the node goes
            ``manageable``), or the node goes ``inspect failed`` after
            ``[conductor]inspect_wait_timeout``.
        """


class VendorInterface(BaseInterface):
    """Vendor-specific extensions: methods marked :func:`passthru`.

    They are called through Ironic's ``/v1/nodes/{node}/vendor_passthru``
    API, ``?method=<name>`` (``.../vendor_passthru/methods`` lists them),
    with the request body as keyword arguments. A method may change the
    node, and may end a wait with ``task.resume()``.
    """

    kind = 'vendor'

    def vendor_routes(self) -> dict[str, 'PassthruSpec']:
        """The passthru methods of this interface, by name."""
        found = {}
        for name in sorted(dir(type(self))):
            spec = getattr(getattr(type(self), name, None), PASSTHRU, None)
            if isinstance(spec, PassthruSpec):
                found[name] = spec
        return found


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


def automated_clean_enabled(task: Task) -> bool:
    """Whether the conductor cleans the node on ``provide`` and after
    ``tear_down``: the node's ``automated_clean``, or else
    ``[conductor] automated_clean``."""
    if task.node.automated_clean is not None:
        return bool(task.node.automated_clean)
    return bool(task.ctx.conf.conductor.automated_clean)


PASSTHRU = '_ferrum_passthru'


@dataclasses.dataclass(frozen=True)
class PassthruSpec:
    """How a vendor passthru method is called (see :func:`passthru`)."""

    http_methods: tuple[str, ...]
    async_call: bool
    description: str
    require_exclusive_lock: bool

    def as_dict(self) -> dict[str, Any]:
        """The entry ``GET .../vendor_passthru/methods`` shows, as Ironic."""
        return {'http_methods': list(self.http_methods),
                'async': self.async_call, 'description': self.description,
                'attach': False,
                'require_exclusive_lock': self.require_exclusive_lock}


def passthru(http_methods: list[str], async_call: bool = True,
             description: str = '', require_exclusive_lock: bool = True
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark ``method(self, task, **body)`` of a vendor interface as passthru.

    :param http_methods: the HTTP methods that call it (``POST``, ...).
    :param async_call: run it on a worker after the request is answered
        (202); otherwise in the request (200, with the method's return
        value, which must be JSON-serialisable, as the body).
    :param require_exclusive_lock: call it with the node's exclusive lock;
        otherwise with a shared one (then it must only read).
    """
    spec = PassthruSpec(tuple(m.upper() for m in http_methods), async_call,
                        description, require_exclusive_lock)

    def mark(func: Callable[..., Any]) -> Callable[..., Any]:
        setattr(func, PASSTHRU, spec)
        return func
    return mark


#: The interface kinds, in the order a node lists them, with their bases.
INTERFACES: dict[str, type] = {
    'power': PowerInterface, 'management': ManagementInterface,
    'boot': BootInterface, 'deploy': DeployInterface,
    'inspect': InspectInterface, 'vendor': VendorInterface,
    'network': NetworkInterface}


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

    def interfaces(self) -> Iterator[tuple[str, BaseInterface]]:
        for kind in INTERFACES:
            yield kind, getattr(self, kind)
