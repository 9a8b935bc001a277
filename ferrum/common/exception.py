# SPDX-License-Identifier: Apache-2.0
"""ferrum's exceptions: a few classes on HTTP-meaning bases.

Each class formats ``msg_fmt`` with its keyword arguments, which it also
keeps as attributes, so callers can inspect ``exc.node`` instead of parsing
the text. Messages say what was wrong and what to do about it.
"""

import logging
from typing import Any

LOG = logging.getLogger(__name__)


class FerrumException(Exception):
    """Base class: ``code`` is the HTTP status the API answers with."""

    msg_fmt = 'An unknown error occurred.'
    code = 500

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        self.kwargs = kwargs
        for key, value in kwargs.items():
            setattr(self, key, value)
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                # A bad format string must not hide the original error.
                LOG.exception('Cannot format the message of %s with %s',
                              type(self).__name__, sorted(kwargs))
                message = self.msg_fmt
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self)


class Invalid(FerrumException):
    msg_fmt = 'Invalid input: %(reason)s'
    code = 400


class NotFound(FerrumException):
    msg_fmt = 'Not found: %(what)s'
    code = 404


class Conflict(FerrumException):
    msg_fmt = 'Conflict: %(reason)s'
    code = 409


class TemporaryFailure(FerrumException):
    msg_fmt = 'Temporary failure, retry later: %(reason)s'
    code = 503


# ---- input ----------------------------------------------------------------

class InvalidParameterValue(Invalid):
    msg_fmt = '%(reason)s'


class MissingParameterValue(Invalid):
    msg_fmt = '%(reason)s'


class InvalidStateRequested(Invalid):
    msg_fmt = ('The requested action "%(action)s" cannot be performed on '
               'node %(node)s while it is in state "%(state)s".')


class NodeIsRetired(Invalid):
    msg_fmt = ('The %(op)s operation cannot be performed on node %(node)s '
               'because it is retired; PATCH retired to false first.')


class AllocationFailed(Invalid):
    msg_fmt = 'Allocation failed: %(reason)s'


class ClaimUncertain(AllocationFailed):
    """The allocation backend could not tell whether its claim was made
    (its fence was unreachable, and a claim may have landed before the
    answer was lost): the allocation fails, and its claim's release is
    queued in the same transaction."""


class InvalidCleanSteps(Invalid):
    msg_fmt = 'Invalid clean steps for node %(node)s: %(reason)s'


class DriverNotSupported(Invalid):
    msg_fmt = ('No conductor supports the driver "%(driver)s"; enable it in '
               'enabled_hardware_types of a conductor.')


class InterfaceNotSupported(Invalid):
    msg_fmt = ('The %(kind)s interface "%(name)s" is not supported by '
               'hardware type %(driver)s or not enabled; supported and '
               'enabled: %(valid)s.')


class UnsupportedDriverExtension(Invalid):
    """Ironic's error for an interface method a driver does not have."""
    msg_fmt = ('Driver %(driver)s does not support %(extension)s '
               '(disabled or not implemented).')


class UnsupportedOperation(Invalid):
    msg_fmt = ('The %(kind)s interface of node %(node)s does not support '
               '%(operation)s.')


# ---- not found --------------------------------------------------------------

class NodeNotFound(NotFound):
    msg_fmt = 'Node %(node)s could not be found.'


class AllocationNotFound(NotFound):
    msg_fmt = 'Allocation %(allocation)s could not be found.'


class LeaseNotFound(NotFound):
    msg_fmt = 'Lease %(lease)s could not be found.'


class NodeHistoryNotFound(NotFound):
    msg_fmt = 'Node history record %(entry)s could not be found.'


class ConductorNotFound(NotFound):
    msg_fmt = 'Conductor %(conductor)s could not be found.'


# ---- conflicts --------------------------------------------------------------

class LeaseConflict(Conflict):
    """A lease cannot have the nodes or window it asks for."""

    msg_fmt = '%(reason)s'


class NodeLocked(Conflict):
    msg_fmt = ('Node %(node)s is locked by host %(host)s; retry the request '
               'once its current operation is over.')


class NodeAlreadyExists(Conflict):
    msg_fmt = 'A node with %(field)s %(value)s already exists.'


class AllocationAlreadyExists(Conflict):
    msg_fmt = ('An allocation or a node\'s instance_uuid with %(field)s '
               '%(value)s already exists; choose another %(field)s.')


class NodeAssociated(Conflict):
    msg_fmt = ('Node %(node)s is already associated with %(what)s; remove '
               'that association first.')


class AllocationGone(Conflict):
    """The allocation was deleted, finished or taken over meanwhile."""

    msg_fmt = ('Allocation %(allocation)s was deleted or taken over by '
               'another conductor while it was being processed.')


class OperationNotPermitted(FerrumException):
    """Ironic's 403 for a combination of requests it does not serve."""

    msg_fmt = '%(reason)s'
    code = 403


class InvalidState(Conflict):
    msg_fmt = '%(reason)s'


class PowerOffDisabled(Conflict):
    """Ironic's PowerStateFailure for a node with disable_power_off."""

    msg_fmt = ('Failed to set node power state to %(pstate)s: the node\'s '
               'disable_power_off is set (unset it first).')


class NodeInMaintenance(Conflict):
    msg_fmt = ('Node %(node)s is in maintenance; take it out of '
               'maintenance before %(action)s.')


# ---- temporary failures -----------------------------------------------------

class DatabaseUnavailable(TemporaryFailure):
    """The database could not be reached, or went away mid-transaction.

    Raised by :mod:`ferrum.db.api` wherever a connection fails (pool
    checkout, a statement, the commit), on every database and in every
    process, so callers have one exception to handle. The transaction was
    rolled back; the pool reconnects once the database is back.
    """
    msg_fmt = ('The database could not be reached (%(reason)s). Nothing was '
               'changed; retry the request shortly. If this persists, check '
               'the database server and [database] connection.')
    #: Seconds a client is told to wait (``Retry-After``).
    retry_after = 2


class NoFreeConductorWorker(TemporaryFailure):
    msg_fmt = ('All %(size)d conductor workers are busy; the node was left '
               'as it was, retry later or raise '
               '[conductor]workers_pool_size.')


class ConductorNotServing(TemporaryFailure):
    """Nothing was done: the conductor's endpoint answers, its service not.

    The API retries such a call at once on another conductor.
    """
    msg_fmt = ('Conductor %(host)s is starting or stopping and takes no '
               'calls; retry shortly.')


class ConductorShuttingDown(TemporaryFailure):
    msg_fmt = ('Conductor %(host)s is shutting down and takes no new work; '
               'retry against another conductor.')


# ---- start-up: configuration and the database ------------------------------

class ConfigInvalid(FerrumException):
    """A config file sets an option to a value it refuses."""

    msg_fmt = ('[%(group)s] %(option)s%(where)s is not valid: %(reason)s. '
               'Fix it in the config file.')


class DatabaseConfigInvalid(FerrumException):
    """[database] connection cannot be used: a malformed URL, an unknown
    dialect, or a driver that is not installed."""

    msg_fmt = 'Cannot use the database %(url)s: %(reason)s'


class SchemaOutOfDate(FerrumException):
    msg_fmt = ('The database at %(url)s is at schema revision %(current)s but '
               'this ferrum needs %(head)s; run "ferrum-dbsync upgrade".')


class DatabaseUnreachable(FerrumException):
    """The database did not answer at start, after oslo.db's retries."""

    msg_fmt = ('Cannot connect to the database %(url)s (tried %(attempts)s '
               'times, %(interval)s s apart): %(reason)s. Check that the '
               'server runs and [database] connection.')


# ---- driver loading and driver failures (raised at start-up or by hooks) ----

class DriverLoadError(FerrumException):
    msg_fmt = ('Cannot load %(what)s "%(name)s" from entry point namespace '
               '%(namespace)s: %(reason)s')


class IncompatibleInterface(FerrumException):
    msg_fmt = ('%(kind)s interface "%(name)s" is set as '
               'default_%(kind)s_interface but hardware type %(driver)s does '
               'not support it (it supports %(supported)s); unset the '
               'default or change it.')


class NoValidInterface(FerrumException):
    msg_fmt = ('Hardware type %(driver)s supports %(kind)s interfaces '
               '%(supported)s but none of them is in '
               'enabled_%(kind)s_interfaces (%(enabled)s); enable one.')


class DriverError(FerrumException):
    """A driver hook failed; the message lands in the node's last_error."""

    msg_fmt = '%(reason)s'


class PowerStateFailure(DriverError):
    msg_fmt = ('Failed to set node %(node)s to power state %(state)s: '
               '%(reason)s')


class CleaningFailure(DriverError):
    msg_fmt = 'Cleaning of node %(node)s failed: %(reason)s'


# ---- ports ----

class InvalidMAC(Invalid):
    msg_fmt = ('Expected a MAC address but received "%(mac)s". A MAC address '
               'is six pairs of hexadecimal digits separated by colons, '
               'such as 52:54:00:12:34:56.')


class PortNotFound(NotFound):
    msg_fmt = 'Port %(port)s could not be found.'


class MACAlreadyExists(Conflict):
    msg_fmt = ('A port with MAC address %(mac)s already exists; each MAC '
               'address belongs to one port.')


class PortAlreadyExists(Conflict):
    msg_fmt = 'A port with UUID %(uuid)s already exists.'


class PortDuplicateName(Conflict):
    msg_fmt = 'A port with name %(name)s already exists.'


# ---- port groups (Ironic's messages) ----

class PortgroupNotFound(NotFound):
    msg_fmt = 'Portgroup %(portgroup)s could not be found.'


class PortgroupAlreadyExists(Conflict):
    msg_fmt = 'A portgroup with UUID %(uuid)s already exists.'


class PortgroupDuplicateName(Conflict):
    msg_fmt = 'A portgroup with name %(name)s already exists.'


class PortgroupMACAlreadyExists(Conflict):
    msg_fmt = 'A portgroup with MAC address %(mac)s already exists.'


class PortgroupMembership(Conflict):
    """A port and its group disagree (standalone ports, physical
    network): Ironic's 409s, with its messages."""

    msg_fmt = '%(reason)s'


class PortgroupNotEmpty(Invalid):
    msg_fmt = ('Cannot complete the requested action because portgroup '
               '%(portgroup)s contains ports.')


# ---- deploy templates ----

class DeployTemplateNotFound(NotFound):
    msg_fmt = 'Deploy template %(template)s could not be found.'


class DeployTemplateDuplicateName(Conflict):
    msg_fmt = 'A deploy template with name %(name)s already exists.'


class DeployTemplateAlreadyExists(Conflict):
    msg_fmt = 'A deploy template with UUID %(uuid)s already exists.'


class InvalidDeployTemplate(Invalid):
    msg_fmt = 'Deploy template invalid: %(err)s.'


# ---- drivers and conductors -------------------------------------------------

class DriverNotFound(NotFound):
    msg_fmt = ('No live conductor runs the driver "%(driver)s"; GET '
               '/v1/drivers lists those that do.')


class NotFoundAtVersion(NotFound):
    """An endpoint newer than the request's version: 404, as in Ironic."""

    msg_fmt = ('%(what)s does not exist at API version %(current)s; it needs '
               '1.%(minor)d or later. Send the header "%(header)s: '
               '1.%(minor)d" (or "latest").')


class NotAllowedAtVersion(FerrumException):
    """A write to an endpoint newer than the request's version: 405, as
    Ironic answers (its reads get :class:`NotFoundAtVersion`)."""

    msg_fmt = ('%(what)s does not accept %(method)s at API version '
               '%(current)s; it needs 1.%(minor)d or later. Send the header '
               '"%(header)s: 1.%(minor)d" (or "latest").')
    code = 405


# ---- VIFs (the network interface) ----

class VifAlreadyAttached(Conflict):
    msg_fmt = ('Unable to attach VIF because VIF %(vif)s is already attached '
               'to Ironic %(object_type)s %(object_uuid)s; detach it first.')


class VifNotAttached(Invalid):
    msg_fmt = ('Unable to detach VIF %(vif)s from node %(node)s because it '
               'is not attached to it; GET /v1/nodes/%(node)s/vifs lists '
               'those that are.')


class PortHasVif(Conflict):
    msg_fmt = ('Cannot delete port %(port)s as it is bound to VIF %(vif)s '
               'for use; detach the VIF first, or set the node in '
               'maintenance.')


# ---- asynchronous work: heartbeats, lookup, vendor passthru ----

class HeartbeatNotSupported(Invalid):
    msg_fmt = ('Node %(node)s takes no heartbeats: its deploy interface '
               '%(interface)s does not implement them. Use a deploy '
               'interface driven by a ramdisk agent.')


class NodeNotWaiting(NotFound):
    """Lookup and heartbeat only find nodes a ramdisk may be running on."""

    msg_fmt = ('Node %(node)s is in provision state "%(state)s", where no '
               'ramdisk agent is expected; lookup and heartbeat answer only '
               'for nodes deploying, cleaning or inspecting.')


class NoSuchPassthru(Invalid):
    msg_fmt = ('No vendor passthru method "%(method)s" on node %(node)s; '
               'GET /v1/nodes/%(node)s/vendor_passthru/methods lists them.')


class PassthruHttpMethod(Invalid):
    msg_fmt = ('Vendor passthru method "%(method)s" does not accept HTTP '
               '%(http_method)s; use one of %(allowed)s.')


# ---- chassis and volumes ----

class ChassisNotFound(NotFound):
    msg_fmt = 'Chassis %(chassis)s could not be found.'


class ChassisAlreadyExists(Conflict):
    msg_fmt = 'A chassis with UUID %(uuid)s already exists.'


class ChassisNotEmpty(Invalid):
    msg_fmt = ('Cannot complete the requested action because chassis '
               '%(chassis)s contains nodes.')


class VolumeConnectorNotFound(NotFound):
    msg_fmt = 'Volume connector %(connector)s could not be found.'


class VolumeConnectorAlreadyExists(Conflict):
    msg_fmt = 'A volume connector with UUID %(uuid)s already exists.'


class VolumeConnectorTypeAndIdAlreadyExists(Conflict):
    msg_fmt = ('A volume connector with type %(type)s and connector ID '
               '%(connector_id)s already exists.')


class VolumeTargetNotFound(NotFound):
    msg_fmt = 'Volume target %(target)s could not be found.'


class VolumeTargetAlreadyExists(Conflict):
    msg_fmt = 'A volume target with UUID %(uuid)s already exists.'


class VolumeTargetBootIndexAlreadyExists(Conflict):
    msg_fmt = ("A volume target with boot index '%(boot_index)s' for the "
               "same node already exists.")
