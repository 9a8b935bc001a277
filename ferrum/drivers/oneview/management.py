# SPDX-License-Identifier: Apache-2.0
"""The ``oneview`` management interface: the boot order of the profile.

OneView sets the boot device through the server profile's boot order, so
the device is written to ferrum's profile when the node has one, and
remembered in ``driver_internal_info`` to be put first in the next profile
ferrum applies. A boot order is persistent: a one-time boot device is set
as a persistent one (OneView has no one-time boot without iLO's Redfish).
"""

from typing import TYPE_CHECKING, Any

from oslo_config import cfg

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

_FROM_ONEVIEW = {name: device
                 for device, name in allocation.BOOT_DEVICES.items()}


class OneViewManagement(base.ManagementInterface):
    """Boot device through the boot order of ferrum's server profile."""

    def check_configuration(self, conf: cfg.ConfigOpts) -> None:
        """[oneview] must be complete; credentials are tried in the
        background (see ``client.check_configuration``)."""
        client_mod.check_configuration(conf)

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        allocation.params(task)

    def get_supported_boot_devices(self, task: 'Task') -> list[str]:
        return list(allocation.BOOT_DEVICES)

    def set_boot_device(self, task: 'Task', device: str,
                        persistent: bool = False) -> None:
        if device not in allocation.BOOT_DEVICES:
            raise exception.InvalidParameterValue(
                reason='Boot device "%s" is not supported by the oneview '
                       'management interface; use one of %s' % (
                           device[:100], ', '.join(allocation.BOOT_DEVICES)))
        node = allocation.params(task)
        info = dict(task.node.driver_internal_info)
        info[allocation.BOOT_DEVICE] = {'boot_device': device,
                                        'persistent': True}
        task.node.driver_internal_info = info
        if node.applied_server_profile_uri:
            allocation.client_for(task).set_first_boot_device(
                node.applied_server_profile_uri,
                allocation.BOOT_DEVICES[device])

    def get_boot_device(self, task: 'Task') -> dict[str, Any]:
        node = allocation.params(task)
        if node.applied_server_profile_uri:
            profile = allocation.client_for(task).get_profile(
                node.applied_server_profile_uri)
            order = (profile.get('boot') or {}).get('order') or []
            device = _FROM_ONEVIEW.get(str(order[0])) if order else None
            return {'boot_device': device,
                    'persistent': True if device else None}
        wanted = task.node.driver_internal_info.get(allocation.BOOT_DEVICE)
        if wanted:
            return dict(wanted)
        return {'boot_device': None, 'persistent': None}
