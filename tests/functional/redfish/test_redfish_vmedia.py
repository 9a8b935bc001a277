# SPDX-License-Identifier: Apache-2.0
"""The redfish-virtual-media boot interface through a real conductor, real
sushy and the real sushy-emulator, which downloads every inserted image
from an HTTP server of the test's own on loopback.

What the BMC holds is read from the emulator's own resource
(``Systems/<id>/VirtualMedia/Cd``) with requests, not through ferrum.
"""

import http.server
import threading

import pytest
import requests

from ferrum.common import exception
from ferrum.common import states
from ferrum.conductor import task_manager
from ferrum.drivers.redfish import errors
from ferrum.objects import node as node_obj
from tests import process
from tests.functional.conductor.flows import settled
from tests.functional.conductor.flows import to_state

VMEDIA = 'redfish-virtual-media'
#: Deploy and tear-down wait for the emulator's power changes (generous:
#: a loaded machine).
SLOW = 180


class Images:
    """ISO files served over HTTP on loopback; counts each file's GETs."""

    def __init__(self, directory):
        self.hits = {}
        for name in ('deploy.iso', 'boot.iso', 'other.iso'):
            # Any bytes do: the emulator stores the image, it boots nothing.
            (directory / name).write_bytes(b'CD001' + name.encode() * 64)
        images = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(directory), **kwargs)

            def do_GET(self):
                name = self.path.lstrip('/')
                images.hits[name] = images.hits.get(name, 0) + 1
                super().do_GET()

            def log_message(self, *args):
                pass

        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       Handler)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        daemon=True)
        self._thread.start()

    def url(self, name):
        return 'http://127.0.0.1:%d/%s' % (self._server.server_port, name)

    def close(self):
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=30)


@pytest.fixture
def images(tmp_path):
    served = Images(tmp_path)
    yield served
    served.close()


@pytest.fixture
def vmedia_conf(conf):
    conf.set_override('enabled_boot_interfaces', ['fake', 'noop', VMEDIA])


@pytest.fixture
def conductor(vmedia_conf, redfish_conductor):
    # vmedia_conf first: the boot interface is enabled before the start.
    return redfish_conductor


def cd(emulator, system):
    """The virtual CD as the emulator itself serves it."""
    response = requests.get(
        '%s/redfish/v1/Systems/%s/VirtualMedia/Cd' % (emulator.url, system),
        auth=(emulator.username, emulator.password), timeout=30)
    response.raise_for_status()
    return response.json()


def enroll(conductor, emulator, system, images, **info):
    driver_info = emulator.driver_info(system,
                                       deploy_iso=images.url('deploy.iso'))
    driver_info.update(info)
    return conductor.manager.create_node({
        'driver': 'redfish', 'boot_interface': VMEDIA,
        'driver_info': driver_info,
        'instance_info': {'boot_iso': images.url('boot.iso')}})


def test_deploy_inserts_the_iso_and_tear_down_ejects_it(
        conductor, db, emulator, system, images):
    node = enroll(conductor, emulator, system, images)
    assert node.boot_interface == VMEDIA
    assert not cd(emulator, system)['Inserted']

    node = to_state(conductor.manager, db, node, states.ACTIVE,
                    timeout=SLOW)
    assert node.last_error is None
    media = cd(emulator, system)
    assert (media['Inserted'], media['Image']) == (True,
                                                   images.url('boot.iso'))
    # The instance's ISO only: no deploy ramdisk boots before it (as with
    # Ironic's ramdisk deploy), so the BMC downloads nothing else.
    assert images.hits == {'boot.iso': 1}
    boot = emulator.system(system)['Boot']
    assert boot['BootSourceOverrideTarget'] == 'Cd'
    assert emulator.system(system)['PowerState'] == 'On'

    conductor.manager.do_provisioning_action(node.uuid, 'deleted')
    node = settled(db, node.id, states.AVAILABLE, timeout=SLOW)
    assert node.last_error is None
    media = cd(emulator, system)
    assert (media['Inserted'], media['Image']) == (False, '')
    assert emulator.system(system)['Boot']['BootSourceOverrideTarget'] == (
        'Hdd')


def test_inserting_is_idempotent_and_replaces_another_image(
        conductor, emulator, system, images):
    node = enroll(conductor, emulator, system, images)
    with task_manager.acquire(conductor.ctx, node.uuid,
                              purpose='test') as task:
        boot = task.driver.boot
        boot.prepare_instance(task)
        boot.prepare_instance(task)  # already in: not downloaded again
        assert images.hits == {'boot.iso': 1}
        assert cd(emulator, system)['Image'] == images.url('boot.iso')

        task.node.instance_info = {'boot_iso': images.url('other.iso')}
        boot.prepare_instance(task)
        media = cd(emulator, system)
        assert (media['Inserted'], media['Image']) == (
            True, images.url('other.iso'))

        boot.clean_up_instance(task)
        assert not cd(emulator, system)['Inserted']


def test_ejecting_an_empty_cd_is_fine(conductor, emulator, system, images):
    node = enroll(conductor, emulator, system, images)
    with task_manager.acquire(conductor.ctx, node.uuid,
                              purpose='test') as task:
        task.driver.boot.clean_up_ramdisk(task)
        task.driver.boot.clean_up_instance(task)
    media = cd(emulator, system)
    assert (media['Inserted'], media['Image']) == (False, '')
    assert images.hits == {}


def _closed_port_url():
    # A port nothing listens on: the BMC's download is refused, and the
    # emulator answers 500 (a 404 from the server is its 400).
    return 'http://127.0.0.1:%d/gone.iso' % process.free_port()


@pytest.mark.parametrize('where', ['404', 'refused'])
def test_an_image_the_bmc_cannot_download_fails_the_deploy_naming_it(
        conductor, db, emulator, system, images, where):
    url = (images.url('missing.iso') if where == '404'
           else _closed_port_url())
    node = enroll(conductor, emulator, system, images)
    node.instance_info = {'boot_iso': url}
    node.save()
    node = to_state(conductor.manager, db, node, states.AVAILABLE,
                    timeout=SLOW)
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    node = settled(db, node.id, states.DEPLOYFAIL, timeout=SLOW)
    error = node.last_error
    assert url in error and 'instance_info boot_iso' in error, error
    assert 'did not answer' not in error and 'Traceback' not in error
    assert emulator.password not in error
    assert not cd(emulator, system)['Inserted']
    if where == '404':
        assert images.hits == {'missing.iso': 1}


def test_a_failed_deploy_leaves_no_image_in_the_cd(
        conductor, db, emulator, system, images):
    """Another image is in the CD (here the deploy ramdisk's, which a
    deploy interface booting one inserts) and the instance's ISO 404s:
    the failed deploy leaves the CD empty."""
    node = enroll(conductor, emulator, system, images)
    node.instance_info = {'boot_iso': images.url('missing.iso')}
    node.save()
    node = to_state(conductor.manager, db, node, states.AVAILABLE,
                    timeout=SLOW)
    with task_manager.acquire(conductor.ctx, node.uuid,
                              purpose='test') as task:
        task.driver.boot.prepare_ramdisk(task)
    assert cd(emulator, system)['Image'] == images.url('deploy.iso')
    conductor.manager.do_provisioning_action(node.uuid, 'active')
    node = settled(db, node.id, states.DEPLOYFAIL, timeout=SLOW)
    assert 'instance_info boot_iso' in node.last_error, node.last_error
    assert 'cleaning up also failed' not in node.last_error
    assert images.hits == {'deploy.iso': 1, 'missing.iso': 1}
    media = cd(emulator, system)
    assert (media['Inserted'], media['Image']) == (False, '')


def test_a_bmc_that_vanished_is_an_outage_not_an_image_error(
        conductor, emulator, images):
    gone = 'http://127.0.0.1:%d' % process.free_port()
    node = enroll(conductor, emulator, UNUSED_SYSTEM, images,
                  redfish_address=gone)
    with task_manager.acquire(conductor.ctx, node.uuid,
                              purpose='test') as task:
        with pytest.raises(errors.RedfishUnreachable) as caught:
            task.driver.boot.prepare_ramdisk(task)
        assert caught.value.code == 503
        assert gone in str(caught.value)
        with pytest.raises(errors.RedfishUnreachable):
            task.driver.boot.clean_up_ramdisk(task)
    assert images.hits == {}

#: Validation never reaches the BMC: no System of the emulator is used.
UNUSED_SYSTEM = 'validated-only'

BAD = [
    ({'deploy_iso': None}, 'driver_info deploy_iso is required'),
    ({'deploy_iso': 'ftp://images.example/d.iso'},
     'driver_info deploy_iso must be an http:// or https:// URL'),
    ({'deploy_iso': 'http://user:s3cret@images.example/d.iso'},
     'driver_info deploy_iso must not hold credentials'),
    ({'deploy_iso': 'http://images.example:99999/d.iso'},
     'driver_info deploy_iso is not a URL'),
    ({'deploy_iso': 42}, 'driver_info deploy_iso must be an http'),
    ({'boot_iso': None}, 'instance_info boot_iso is required'),
    ({'boot_iso': '/srv/boot.iso'},
     'instance_info boot_iso must be an http:// or https:// URL'),
    ({'redfish_address': None}, 'redfish_address is required'),
]


@pytest.mark.parametrize('change,message', BAD)
def test_validation_names_the_field_without_contacting_the_bmc(
        conductor, emulator, images, change, message):
    node = enroll(conductor, emulator, UNUSED_SYSTEM, images)
    info = dict(node.driver_info)
    instance = dict(node.instance_info)
    for key, value in change.items():
        target = instance if key == 'boot_iso' else info
        if value is None:
            target.pop(key)
        else:
            target[key] = value
    node.driver_info = info
    node.instance_info = instance
    node.save()
    result = conductor.manager.validate_driver_interfaces(node.uuid)['boot']
    assert result['result'] is False
    assert message in result['reason'], result['reason']
    assert 's3cret' not in result['reason']
    assert images.hits == {}


def test_the_old_field_name_is_read_and_noop_management_is_refused(
        conductor, emulator, images):
    node = enroll(conductor, emulator, UNUSED_SYSTEM, images)
    info = dict(node.driver_info)
    info['redfish_deploy_iso'] = info.pop('deploy_iso')
    node.driver_info = info
    node.management_interface = 'noop'
    node.save()
    result = conductor.manager.validate_driver_interfaces(node.uuid)['boot']
    assert result['result'] is False
    assert 'cannot select' in result['reason'], result['reason']
    node.management_interface = 'redfish'
    node.save()
    assert conductor.manager.validate_driver_interfaces(node.uuid)[
        'boot'] == {'result': True, 'reason': None}


def test_deploy_without_boot_iso_is_refused_before_it_starts(
        conductor, db, emulator, system, images):
    node = enroll(conductor, emulator, system, images)
    node = to_state(conductor.manager, db, node, states.AVAILABLE,
                    timeout=SLOW)
    node.instance_info = {}
    node.save()
    with pytest.raises(exception.MissingParameterValue,
                       match='instance_info boot_iso'):
        conductor.manager.do_provisioning_action(node.uuid, 'active')
    node = node_obj.Node.get(db, node.id)
    assert (node.provision_state, node.reservation) == (states.AVAILABLE,
                                                        None)
    assert images.hits == {}


def test_network_boot_with_the_noop_boot_interface_is_unchanged(
        redfish_conductor, db, emulator, system):
    """Without virtual media the ramdisk deploy still boots from PXE."""
    node = redfish_conductor.manager.create_node({
        'driver': 'redfish', 'driver_info': emulator.driver_info(system)})
    assert node.boot_interface == 'noop'
    node = to_state(redfish_conductor.manager, db, node, states.ACTIVE,
                    timeout=SLOW)
    assert node.last_error is None
    assert emulator.system(system)['Boot']['BootSourceOverrideTarget'] == (
        'Pxe')
