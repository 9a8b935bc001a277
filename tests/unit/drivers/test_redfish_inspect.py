# SPDX-License-Identifier: Apache-2.0
"""The rules of redfish inspection that need no BMC: Ironic's local_gb,
the cpu_arch names, and ports added once per MAC (on a real database)."""

import types

import pytest

from ferrum.drivers import port
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import inspect
from ferrum.objects import node as node_obj
from ferrum.objects import port as port_obj

GIB = 1024 ** 3


@pytest.mark.parametrize('simple, volumes, drives, expected', [
    # The smallest disk of 4 GiB or more, less 1 GiB.
    ([], [], [2 * GIB, 480 * GIB, 120 * GIB], 119),
    ([], [], [4 * GIB], 3),
    ([], [], [4 * GIB - 1], None),
    ([], [], [], None),
    # Volumes before drives; SimpleStorage and Storage: the smaller.
    ([], [300 * GIB], [100 * GIB], 299),
    ([500 * GIB], [], [200 * GIB], 199),
    ([50 * GIB], [], [200 * GIB], 49),
    ([50 * GIB + GIB // 2], [], [], 49),
])
def test_local_gb_follows_ironic(simple, volumes, drives, expected):
    assert inspect.local_gb(simple, volumes, drives) == expected


def _cpu(instruction_set=None, architecture=None):
    return types.SimpleNamespace(instruction_set=instruction_set,
                                 processor_architecture=architecture)


@pytest.mark.parametrize('processors, expected', [
    ([_cpu(client.InstructionSet.X86_64, client.ProcessorArchitecture.X86)],
     'x86_64'),
    ([_cpu(client.InstructionSet.ARM_A64, client.ProcessorArchitecture.ARM)],
     'aarch64'),
    # No InstructionSet: Ironic's ProcessorArchitecture table.
    ([_cpu(None, client.ProcessorArchitecture.X86)], 'x86_64'),
    ([_cpu(client.InstructionSet.OEM, None),
      _cpu(None, client.ProcessorArchitecture.MIPS)], 'mips'),
    ([_cpu(client.InstructionSet.OEM, client.ProcessorArchitecture.OEM)],
     None),
    ([], None),
])
def test_cpu_arch(processors, expected):
    assert inspect.cpu_arch(processors) == expected


def test_ports_are_added_once_per_mac(db):
    node = node_obj.Node.create(db, {'driver': 'fake-hardware'})
    other = node_obj.Node.create(db, {'driver': 'fake-hardware'})
    port_obj.Port.create(db, {'node_id': other.id,
                              'address': '52:54:00:00:00:0c'})

    added = port.add_missing(db, node, ['52:54:00:00:00:0A', 'bogus',
                                        '52:54:00:00:00:0c',
                                        '52:54:00:00:00:0a'])
    assert added.created == ['52:54:00:00:00:0a']
    assert added.existing == ['52:54:00:00:00:0a']
    assert added.refused == {
        'bogus': 'not a MAC address',
        '52:54:00:00:00:0c': 'already a port of node %s' % other.uuid}

    again = port.add_missing(db, node, ['52:54:00:00:00:0a'])
    assert (again.created, again.existing) == ([], ['52:54:00:00:00:0a'])
    assert [p.address for p in port_obj.Port.list(db, node_id=node.id)] == [
        '52:54:00:00:00:0a']
