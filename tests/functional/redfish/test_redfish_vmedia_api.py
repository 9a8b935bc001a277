# SPDX-License-Identifier: Apache-2.0
"""Virtual media through the node API (1.89, 1.93) of a real ferrum
process, the ``redfish`` management interface and the real
sushy-emulator, which downloads the image from an HTTP server of the
test's own on loopback. What the BMC holds is read from the emulator's
own resource, not through ferrum.
"""

import functools
import http.server
import threading

import pytest
import requests

from tests.functional.redfish.emulator import Emulator
from tests.functional.server import running_ferrum
from tests.polling import wait_for

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.93'}
CONF = {
    'DEFAULT': {'enabled_hardware_types': 'fake-hardware,redfish',
                'enabled_power_interfaces': 'fake,redfish',
                'enabled_management_interfaces': 'fake,noop,redfish',
                'enabled_deploy_interfaces': 'fake,ramdisk'},
    'redfish': {'connect_timeout': '5'},
}


@pytest.fixture
def image_url(tmp_path):
    """The URL of an ISO-looking file served over HTTP on loopback."""
    (tmp_path / 'www').mkdir()
    (tmp_path / 'www' / 'tools.iso').write_bytes(b'CD001' * 100)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                directory=str(tmp_path / 'www'))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield 'http://127.0.0.1:%d/tools.iso' % server.server_port
    server.shutdown()
    server.server_close()
    thread.join(timeout=30)


def _bmc_cd(emulator: Emulator, system):
    response = requests.get(
        '%s/redfish/v1/Systems/%s/VirtualMedia/Cd' % (emulator.url, system),
        auth=(emulator.username, emulator.password), timeout=30)
    response.raise_for_status()
    return response.json()


def _call(method, url, body=None, expect=200):
    response = requests.request(method, url, json=body, headers=HEADERS,
                                timeout=60)
    assert response.status_code == expect, response.text
    return response.json() if response.content else None


def test_attach_list_detach_through_the_api(tmp_path, emulator, system,
                                            image_url):
    with running_ferrum(tmp_path, CONF) as url:
        node = _call('POST', url + '/v1/nodes', {
            'driver': 'redfish', 'deploy_interface': 'ramdisk',
            'driver_info': emulator.driver_info(system)}, expect=201)
        vmedia = '%s/v1/nodes/%s/vmedia' % (url, node['uuid'])
        _call('POST', vmedia, {'device_type': 'cdrom',
                               'image_url': image_url}, expect=204)
        wait_for(lambda: _bmc_cd(emulator, system)['Inserted'],
                 timeout=60, what='the CD inserted')
        assert _bmc_cd(emulator, system)['Image'] == image_url
        listed = _call('GET', vmedia)
        cds = [m for m in listed if 'CD' in m['media_types']]
        assert cds and cds[0]['inserted'] is True
        assert cds[0]['image'] == image_url
        _call('DELETE', vmedia + '?device_types=cdrom', expect=204)
        wait_for(lambda: not _bmc_cd(emulator, system)['Inserted'],
                 timeout=60, what='the CD ejected')
        assert _call('GET', '%s/v1/nodes/%s' % (
            url, node['uuid']))['last_error'] is None
