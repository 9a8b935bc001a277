# SPDX-License-Identifier: Apache-2.0
"""What the real agent's tests share: ferrum's configuration for agent
test machines, an image's instance_info, and enrolling a machine as a
node."""

import contextlib
from collections.abc import Iterator
from typing import Any

from tests.agent import images as images_mod
from tests.agent import machines
from tests.functional.agent.ferrum_process import Ferrum

#: The callback timeouts of these tests: long enough for a loaded machine
#: to boot the agent and write an image, short enough for the tests that
#: wait for them to pass.
CALLBACK_TIMEOUT = 45


def ferrum_conf(**extra: dict[str, str]) -> dict[str, dict[str, str]]:
    conf = {
        'DEFAULT': {
            'enabled_hardware_types': 'agent-test,fake-hardware',
            'enabled_power_interfaces': 'agent-test,fake',
            'enabled_management_interfaces': 'fake',
            'enabled_boot_interfaces': 'fake',
            'enabled_deploy_interfaces': 'direct,fake',
            'debug': 'true'},
        'conductor': {
            'deploy_callback_timeout': str(CALLBACK_TIMEOUT),
            'clean_callback_timeout': str(CALLBACK_TIMEOUT),
            'check_provision_state_interval': '1',
            'sync_power_state_interval': '0'},
        # A loop device has no ATA or NVMe secure erase: overwrite it with
        # zeros only (one pass instead of two, same assertions).
        'deploy': {'enable_ata_secure_erase': 'false',
                   'enable_nvme_secure_erase': 'false',
                   'continue_if_disk_secure_erase_fails': 'true',
                   'shred_random_overwrite_iterations': '0'},
    }
    for section, values in extra.items():
        conf.setdefault(section, {}).update(values)
    return conf


def image_info(made: images_mod.Images, served: images_mod.ImageServer,
               name: str = 'disk.raw', sha256: str | None = None
               ) -> dict[str, Any]:
    path = made.raw if name == 'disk.raw' else made.qcow2
    digest = sha256 or images_mod.sha256_file(path)
    return {'image_source': served.url(name),
            'image_os_hash_algo': 'sha256', 'image_os_hash_value': digest,
            'image_disk_format': 'raw' if name.endswith('.raw') else 'qcow2'}


@contextlib.contextmanager
def enrolled(ferrum: Ferrum, served: images_mod.ImageServer,
             size_mib: int = 96, driver: str = 'agent-test',
             driver_info: dict[str, Any] | None = None, **options: Any
             ) -> Iterator[tuple[machines.Machine, dict[str, Any]]]:
    """A machine enrolled as a ``manageable`` node (automated cleaning
    runs at ``provide``); the node is deleted before the machine goes."""
    # The agent tries a failed download 10 times, 10 s apart, by default
    # (ipa-image-download-connection-retries): once, at once, here.
    options.setdefault('agent_args', [
        '--image_download_connection_retries', '1',
        '--image_download_connection_retry_interval', '0'])
    with machines.machine(ferrum.url, size_mib=size_mib,
                          forward_ports=[served.port], **options) as box:
        response = ferrum.api('POST', '/v1/nodes', json={
            'driver': driver, 'deploy_interface': 'direct',
            'driver_info': dict(
                driver_info or {}, agent_test_spec=box.spec_path,
                agent_test_boot='boot_device',
                deploy_kernel='http://127.0.0.1/ipa.kernel',
                deploy_ramdisk='http://127.0.0.1/ipa.ramfs'),
            'properties': {'root_device': box.root_device}})
        assert response.status_code == 201, response.text
        node = response.json()
        response = ferrum.api('POST', '/v1/ports', json={
            'node_uuid': node['uuid'], 'address': box.mac})
        assert response.status_code == 201, response.text
        ferrum.provision(node['uuid'], 'manage')
        ferrum.wait_state(node['uuid'], 'manageable')
        try:
            yield box, node
        finally:
            _delete(ferrum, node['uuid'])


def _delete(ferrum: Ferrum, uuid: str) -> None:
    """Best effort: the module's ferrum goes on serving other tests, and a
    node whose machine is gone must not wait for its agent meanwhile."""
    node = ferrum.node(uuid)
    if node['provision_state'] in ('wait call-back', 'clean wait'):
        # Aborting a deploy wait is API 1.110's.
        ferrum.api('PUT', '/v1/nodes/%s/states/provision' % uuid,
                   json={'target': 'abort'},
                   headers={'X-OpenStack-Ironic-API-Version': '1.110'})
    ferrum.api('DELETE', '/v1/nodes/%s' % uuid)
