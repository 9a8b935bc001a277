# SPDX-License-Identifier: Apache-2.0
"""A driver that records every hook the conductor calls on it.

ferrum's own contract tests (tests/functional/conductor/test_contract.py)
use it to prove that each call ``drivers/base.py`` documents happens, and
in which order, with the real conductor. It behaves as ferrum's fake
interfaces do (``fake_fail`` and ``fake_async`` in ``driver_info``) and
logs ``(interface, hook, shared)`` per node in :data:`CALLS`.
"""

import collections
import threading

from ferrum.drivers import hardware_type
from ferrum.drivers.fake import interfaces as fake

#: node uuid -> [(kind, hook, shared lock?)], in call order.
CALLS = collections.defaultdict(list)
_LOCK = threading.Lock()


def record(kind, hook, task):
    with _LOCK:
        CALLS[task.node.uuid].append((kind, hook, task.shared))


def calls(node_uuid, kind=None):
    """The hooks called on a node, as ``'kind.hook'`` strings."""
    with _LOCK:
        return ['%s.%s' % (k, h) for k, h, _s in CALLS[node_uuid]
                if kind is None or k == kind]


class RecordingHardware(hardware_type.AbstractHardwareType):
    supported_power_interfaces = ['recording']
    supported_management_interfaces = ['fake']
    supported_deploy_interfaces = ['recording']
    supported_boot_interfaces = ['recording']
    supported_inspect_interfaces = ['recording']
    supported_vendor_interfaces = ['fake']


class RecordingPower(fake.FakePower):
    def validate(self, task):
        record('power', 'validate', task)
        super().validate(task)

    def get_power_state(self, task):
        record('power', 'get_power_state', task)
        return super().get_power_state(task)

    def set_power_state(self, task, power_state, timeout=None):
        record('power', 'set_power_state', task)
        super().set_power_state(task, power_state, timeout)


class RecordingBoot(fake.FakeBoot):
    def validate(self, task):
        record('boot', 'validate', task)


class RecordingInspect(fake.FakeInspect):
    def inspect_hardware(self, task):
        record('inspect', 'inspect_hardware', task)
        return super().inspect_hardware(task)


class RecordingDeploy(fake.FakeDeploy):
    def validate(self, task):
        record('deploy', 'validate', task)

    def prepare(self, task):
        record('deploy', 'prepare', task)
        super().prepare(task)

    def deploy(self, task):
        record('deploy', 'deploy', task)
        return super().deploy(task)

    def tear_down(self, task):
        record('deploy', 'tear_down', task)
        super().tear_down(task)

    def clean_up(self, task):
        record('deploy', 'clean_up', task)
        super().clean_up(task)

    def take_over(self, task):
        record('deploy', 'take_over', task)
        super().take_over(task)

    def prepare_cleaning(self, task):
        record('deploy', 'prepare_cleaning', task)
        return super().prepare_cleaning(task)

    def tear_down_cleaning(self, task):
        record('deploy', 'tear_down_cleaning', task)
        super().tear_down_cleaning(task)

    def execute_clean_step(self, task, step):
        record('deploy', 'execute_clean_step', task)
        return super().execute_clean_step(task, step)

    def heartbeat(self, task, callback_url, agent_version):
        record('deploy', 'heartbeat', task)
        super().heartbeat(task, callback_url, agent_version)
