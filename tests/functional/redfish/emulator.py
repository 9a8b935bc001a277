# SPDX-License-Identifier: Apache-2.0
"""The real ``sushy-emulator`` for the redfish tests: tools/redfish_emulator.py
(one child process on loopback, HTTP Basic auth, optionally TLS and change
notifications) with what the fixtures need on top.

``Emulator(directory, systems, tls=None, notify_url=None)``: ``start()``,
``stop()`` (the state directory is kept, so a restart keeps the Systems'
power and boot), ``url``, ``uuids``, ``username``/``password``,
``system(uuid)`` (the System as the emulator itself serves it, read with
requests), ``driver_info(uuid, **extra)``. ``REDFISH_CONF`` and
``apply_conf(conf)`` enable the redfish hardware type on a test's
conductor configuration.
"""

import pathlib
from typing import Any

from tests.certificates import Files
from tests.real import require_real
from tools import redfish_emulator


class Emulator(redfish_emulator.RedfishEmulator):

    def __init__(self, directory: pathlib.Path, systems: int = 1,
                 tls: Files | None = None,
                 notify_url: str | None = None) -> None:
        if redfish_emulator.BINARY is None:
            require_real('sushy-emulator (pip install sushy-tools)')
        self.tls = tls
        super().__init__(
            directory, systems, notify_url=notify_url,
            tls_cert=str(tls.cert) if tls else None,
            tls_key=str(tls.key) if tls else None,
            ca_file=str(tls.ca) if tls else None)

    def driver_info(self, uuid: str, **extra: Any) -> dict[str, Any]:
        info = {'redfish_address': self.url, 'redfish_system_id': uuid,
                'redfish_username': self.username,
                'redfish_password': self.password}
        if self.tls:
            info['redfish_verify_ca'] = str(self.tls.ca)
        info.update(extra)
        return info


REDFISH_CONF = {
    'DEFAULT': {'enabled_hardware_types': ['fake-hardware', 'redfish'],
                'enabled_power_interfaces': ['fake', 'redfish'],
                'enabled_management_interfaces': ['fake', 'noop', 'redfish'],
                'enabled_deploy_interfaces': ['fake', 'ramdisk']},
    'redfish': {'power_poll_interval': 0.2, 'connect_timeout': 2.0,
                'request_timeout': 30.0, 'server_side_retries_delay': 0.1},
    # The emulator shows a power change after up to 11 s: generous on a
    # loaded machine.
    'conductor': {'power_state_change_timeout': 90},
}


def apply_conf(conf, overrides=REDFISH_CONF):
    for group, values in overrides.items():
        for name, value in values.items():
            conf.set_override(name, value,
                              None if group == 'DEFAULT' else group)
