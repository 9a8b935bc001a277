# SPDX-License-Identifier: Apache-2.0
"""The ``redfish`` inspect interface: the node's hardware, out of band.

One pass over the node's System (one :func:`client.call`) fills
``node.properties`` as Ironic's ``redfish`` inspect interface does:

* ``cpus``: the logical CPUs, the sum of ``TotalThreads`` over the
  System's ``Processors``;
* ``cpu_arch``: the first processor's ``InstructionSet`` (``x86-64`` is
  ``x86_64``, ``ARM-A64`` is ``aarch64``), else its
  ``ProcessorArchitecture`` by Ironic's table (``x86`` is ``x86_64``);
* ``memory_mb``: ``MemorySummary.TotalSystemMemoryGiB`` x 1024;
* ``local_gb``: by Ironic's rule, :func:`local_gb`;

and creates a port for each MAC of an EthernetInterface that is
``Enabled`` with health ``OK`` (:func:`ferrum.drivers.port.add_missing`:
never twice). The numbers are integers, as the ``fake`` interface writes
them (Ironic writes ``local_gb`` as a string).

A BMC that does not report a part (the emulator reports no processors,
memory or storage) does not fail inspection, unlike Ironic's: what was
found is recorded, each property not found keeps the value it had, and
``driver_internal_info['inspection_missing']`` maps each such property
(and ``ports``, for NICs without a port) to why; an inspection that
finds everything removes it. One WARNING log line with the node's UUID
says the same. What "does not report" means is :func:`client.optional`'s;
refused credentials or a BMC that stops answering fail the inspection
(``inspect failed``, with ``last_error``).
"""

import dataclasses
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ferrum.drivers import base
from ferrum.drivers import port
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors
from ferrum.drivers.redfish import power

if TYPE_CHECKING:
    from ferrum.drivers.base import Task
    from ferrum.objects.node import Node

LOG = logging.getLogger(__name__)

#: The driver_internal_info key listing what the last inspection did not
#: find: property (or ``ports``) -> why.
MISSING = 'inspection_missing'
#: Redfish InstructionSet -> cpu_arch (Ironic's inventory names).
INSTRUCTION_SETS = {
    client.InstructionSet.X86: 'i686',
    client.InstructionSet.X86_64: 'x86_64',
    client.InstructionSet.IA_64: 'ia64',
    client.InstructionSet.ARM_A32: 'arm',
    client.InstructionSet.ARM_A64: 'aarch64',
    client.InstructionSet.MIPS32: 'mips',
    client.InstructionSet.MIPS64: 'mips64'}
#: Redfish ProcessorArchitecture -> cpu_arch (Ironic's cpu_arch table),
#: for processors that give no InstructionSet.
ARCHITECTURES = {
    client.ProcessorArchitecture.X86: 'x86_64',
    client.ProcessorArchitecture.IA_64: 'ia64',
    client.ProcessorArchitecture.ARM: 'arm',
    client.ProcessorArchitecture.MIPS: 'mips'}
GIB = 1024 ** 3
#: Disks smaller than this are not the root disk (Ironic's 4 GiB).
_SMALLEST_DISK = 4 * GIB


def local_gb(simple_storage: Iterable[int], volumes: Iterable[int],
             drives: Iterable[int]) -> int | None:
    """``local_gb`` from disk sizes in bytes, by Ironic's rule.

    In each source, the smallest disk of at least 4 GiB counts; Storage's
    volumes are preferred to its drives; when both SimpleStorage and
    Storage have such a disk, the smaller one. Its size in GiB, rounded
    down, minus 1 (Ironic's margin for partitioning). None when no disk
    of 4 GiB or more is listed.
    """
    def smallest(sizes: Iterable[int]) -> int:
        return min((size for size in sizes if size >= _SMALLEST_DISK),
                   default=0)

    simple = smallest(simple_storage)
    storage = smallest(volumes) or smallest(drives)
    size = min(simple, storage) if simple and storage else simple or storage
    return max(0, size // GIB - 1) if size else None


def cpu_arch(processors: Iterable[Any]) -> str | None:
    """The ``cpu_arch`` of the first processor that names a known one."""
    for processor in processors:
        arch = (INSTRUCTION_SETS.get(processor.instruction_set)
                or ARCHITECTURES.get(processor.processor_architecture))
        if arch:
            return arch
    return None


@dataclasses.dataclass
class Inventory:
    """What one reading of the System found."""

    properties: dict[str, int | str] = dataclasses.field(
        default_factory=dict)
    macs: list[str] = dataclasses.field(default_factory=list)
    #: property (or ``ports``) -> why it was not found.
    missing: dict[str, str] = dataclasses.field(default_factory=dict)


def _processors(system: Any, found: Inventory) -> None:
    members, why = client.optional(lambda: system.processors.get_members())
    if members is None:
        why = 'the BMC reports no Processors (%s)' % why
        found.missing.update(cpus=why, cpu_arch=why)
        return
    threads = sum(member.total_threads or 0 for member in members)
    if threads:
        found.properties['cpus'] = threads
    else:
        found.missing['cpus'] = ('none of its %d Processors gives '
                                 'TotalThreads' % len(members))
    arch = cpu_arch(members)
    if arch:
        found.properties['cpu_arch'] = arch
    else:
        found.missing['cpu_arch'] = (
            'none of its %d Processors gives an InstructionSet or '
            'ProcessorArchitecture that ferrum knows' % len(members))


def _memory(system: Any, found: Inventory) -> None:
    summary = system.memory_summary
    size = summary.size_gib if summary is not None else None
    if size:
        found.properties['memory_mb'] = int(size) * 1024
    else:
        found.missing['memory_mb'] = ('the System\'s MemorySummary gives no '
                                      'TotalSystemMemoryGiB')


def _storage(system: Any, found: Inventory) -> None:
    simple, no_simple = client.optional(
        lambda: system.simple_storage.disks_sizes_bytes)
    # Read once: sushy does not keep a failed read, and retries a 5xx.
    storage, no_storage = client.optional(lambda: system.storage)
    volumes = drives = None
    if storage is not None:
        volumes, _ = client.optional(lambda: storage.volumes_sizes_bytes)
        drives, no_storage = client.optional(
            lambda: storage.drives_sizes_bytes)
    size = local_gb(simple or (), volumes or (), drives or ())
    if size is not None:
        found.properties['local_gb'] = size
    elif simple or volumes or drives:
        found.missing['local_gb'] = 'the BMC lists no disk of 4 GiB or more'
    else:
        found.missing['local_gb'] = (
            'the BMC lists no disks (SimpleStorage: %s; Storage: %s)'
            % (no_simple or 'no disks', no_storage or 'no disks'))


def _nics(system: Any, found: Inventory) -> None:
    summary, why = client.optional(
        lambda: system.ethernet_interfaces.summary)
    if summary is None:
        found.missing['ports'] = ('the BMC reports no EthernetInterfaces '
                                  '(%s)' % why)
        return
    # Ironic's choice: enabled NICs only (sushy lists those with health
    # OK), the current MAC; Redfish allows dashes between the pairs.
    found.macs = sorted(mac.replace('-', ':') for mac, state in
                        summary.items() if state == client.State.ENABLED)
    if not found.macs:
        found.missing['ports'] = ('no EthernetInterface is Enabled with '
                                  'health OK')


def read_inventory(system: Any) -> Inventory:
    """Everything inspection reads, from the node's sushy System."""
    found = Inventory()
    _processors(system, found)
    _memory(system, found)
    _storage(system, found)
    _nics(system, found)
    return found


def _read(task: 'Task', bmc: driver_info.RedfishParams) -> Inventory:
    try:
        return client.call(task.ctx.conf, bmc,
                           'reading the hardware inventory', read_inventory)
    except errors.RedfishUnreachable as exc:
        # Not retried by ferrum: say what the operator does.
        raise errors.RedfishUnreachable(
            'BMC %s did not answer while ferrum read the hardware '
            'inventory: %s. Check that the BMC is up and driver_info '
            'redfish_address, then inspect the node again.'
            % (bmc.address, exc.kwargs.get('reason')), **exc.kwargs) from None


def _note_missing(node: 'Node', address: str, missing: dict[str, str]) -> None:
    """Record ``missing`` in the node's driver_internal_info, and log it;
    an inspection that found everything clears the record."""
    info = {key: value for key, value in node.driver_internal_info.items()
            if key != MISSING}
    if missing:
        info[MISSING] = missing
        LOG.warning('Node %(node)s: inspection through BMC %(bmc)s did not '
                    'find %(what)s; the node keeps its earlier values: '
                    '%(why)s', {
                        'node': node.uuid, 'bmc': address,
                        'what': ', '.join(sorted(missing)),
                        'why': '; '.join('%s: %s' % item
                                         for item in sorted(missing.items()))})
    node.driver_internal_info = info


class RedfishInspect(client.ClosesSessions, base.InspectInterface):
    """Properties and ports from the node's Redfish System (synchronous)."""

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        power.params(task)

    def inspect_hardware(self, task: 'Task') -> str | None:
        """Fill the properties and add ports; see the module's docstring.

        Synchronous: returns None once the node is updated.

        :raises RedfishError: the BMC failed; the node goes ``inspect
            failed`` with the message as ``last_error``, and keeps its
            properties and ports.
        """
        bmc = power.params(task)
        found = _read(task, bmc)
        node = task.node
        node.properties = dict(node.properties, **found.properties)
        added = port.add_missing(task.ctx.db, node, found.macs)
        if added.refused:
            found.missing['ports'] = '; '.join(
                ([found.missing['ports']] if 'ports' in found.missing
                 else []) + ['MAC %s: %s' % item
                             for item in added.refused.items()])
        _note_missing(node, bmc.address, found.missing)
        LOG.info('Node %(node)s inspected through BMC %(bmc)s: %(props)s; '
                 '%(new)d new ports, %(old)d existing',
                 {'node': node.uuid, 'bmc': bmc.address,
                  'props': ', '.join('%s=%s' % item for item in sorted(
                      found.properties.items())) or 'no properties',
                  'new': len(added.created), 'old': len(added.existing)})
        return None
