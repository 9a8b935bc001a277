# SPDX-License-Identifier: Apache-2.0
"""The ``redfish-virtual-media`` boot interface: ISO images in the BMC's
virtual CD.

With Ironic's names: ``prepare_ramdisk`` inserts ``driver_info
deploy_iso`` (Ironic's older ``redfish_deploy_iso`` is read when it is not
set) into the System's virtual CD and sets a one-time boot from it, for a
deploy interface that boots a deploy ramdisk (the ``ramdisk`` deploy does
not); ``prepare_instance`` inserts ``instance_info boot_iso`` and boots
from it for good, as Ironic's ``ramdisk`` deploy over virtual media does;
for an image written to the disk (the ``direct`` deploy, no ``boot_iso``)
it ejects the CD and boots from the disk.
``deploy_iso`` is required all the same, as Ironic requires it. Cleaning
up ejects the CD. Inserting is idempotent: the same image already in the
CD is left there, another one is ejected first.

The BMC downloads the image from its URL itself, so both must be
``http://`` or ``https://`` URLs it can reach (ferrum builds no ISO and
serves none). The boot device is set through the node's management
interface (``redfish``), which must be able to boot from ``cdrom``.
"""

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers import fields
from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)

DEPLOY_ISO = 'deploy_iso'
#: Ironic's deprecated spelling of deploy_iso, still read.
OLD_DEPLOY_ISO = 'redfish_deploy_iso'
BOOT_ISO = 'boot_iso'

PROPERTIES = {
    DEPLOY_ISO: 'Required by the redfish-virtual-media boot interface. The '
                'http:// or https:// URL of the deploy ramdisk\'s ISO, for '
                'a deploy interface that boots one (the ramdisk deploy '
                'boots the instance\'s ISO, instance_info boot_iso, '
                'directly); the BMC downloads it.',
    OLD_DEPLOY_ISO: 'Optional. Deprecated name of deploy_iso, read when '
                    'deploy_iso is not set.',
}

#: Virtual media that can hold an ISO; a DVD drive takes one too (some
#: BMCs have no "CD").
_CD_TYPES = (client.VirtualMediaType.CD, client.VirtualMediaType.DVD)


def _iso_url(values: Mapping[str, Any], field: str, where: str) -> str:
    """The ISO URL in ``values[field]``, checked without I/O.

    :param where: ``driver_info`` or ``instance_info``, for messages.
    """
    value = values.get(field)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise exception.MissingParameterValue(
            reason='%s %s is required by the redfish-virtual-media boot '
                   'interface: set it to the http:// or https:// URL of '
                   'the ISO, which the BMC downloads.' % (where, field))
    if not isinstance(value, str):
        raise fields.fail(field, 'must be an http:// or https:// URL, not '
                          '%s' % type(value).__name__, where)
    text = value.strip()
    fields.http_url(text, field, 'the BMC downloads the ISO without them',
                    where)
    return text


def deploy_iso(info: Mapping[str, Any]) -> tuple[str, str]:
    """``(URL, the field it came from)`` of the deploy ISO."""
    field = (OLD_DEPLOY_ISO if info.get(OLD_DEPLOY_ISO)
             and not info.get(DEPLOY_ISO) else DEPLOY_ISO)
    return _iso_url(info, field, 'driver_info'), 'driver_info %s' % field


def boot_iso(instance_info: Mapping[str, Any]) -> str:
    """The URL of the instance's ISO."""
    return _iso_url(instance_info, BOOT_ISO, 'instance_info')


def _boots_iso(task: 'Task') -> bool:
    """Whether the instance is the ISO (``boot_iso``), as with the
    ``ramdisk`` deploy, rather than an image written to the disk (the
    ``direct`` deploy's ``image_source``)."""
    info = task.node.instance_info or {}
    if info.get(BOOT_ISO) or task.node.deploy_interface == 'ramdisk':
        return True
    return not (info.get('image_source') or info.get('image_url'))


def _cds(system: Any) -> list[Any]:
    """The System's virtual media that take an ISO."""
    return [media for media in system.virtual_media.get_members()
            if any(kind in _CD_TYPES for kind in media.media_types)]


def _eject_all(system: Any) -> int:
    ejected = 0
    for media in _cds(system):
        if media.inserted:
            media.eject_media()
            ejected += 1
    return ejected


class RedfishVirtualMediaBoot(client.ClosesSessions, base.BootInterface):
    """Boots the node from ISO images inserted in its virtual CD."""

    def get_properties(self) -> dict[str, str]:
        return dict(PROPERTIES)

    def validate(self, task: 'Task') -> None:
        """The BMC's fields, ``deploy_iso`` and ``boot_iso``, without I/O;
        and a management interface that can boot from ``cdrom``."""
        driver_info.parse(task.node.driver_info)
        deploy_iso(task.node.driver_info)
        if _boots_iso(task):
            boot_iso(task.node.instance_info or {})
        management = task.driver.management
        if 'cdrom' not in management.get_supported_boot_devices(task):
            raise exception.InvalidParameterValue(
                reason='The redfish-virtual-media boot interface boots from '
                       'the virtual CD, which the management interface "%s" '
                       'cannot select; use the redfish management interface.'
                       % task.node.management_interface)

    def validate_ramdisk(self, task: 'Task') -> None:
        deploy_iso(task.node.driver_info)

    def ramdisk_boot_device(self, task: 'Task') -> str | None:
        return None  # prepare_ramdisk set the virtual CD

    def prepare_ramdisk(self, task: 'Task') -> None:
        url, source = deploy_iso(task.node.driver_info)
        self._insert(task, url, source)
        task.driver.management.set_boot_device(task, 'cdrom',
                                               persistent=False)

    def clean_up_ramdisk(self, task: 'Task') -> None:
        self._eject(task)

    def prepare_instance(self, task: 'Task') -> None:
        if not _boots_iso(task):
            # An image written to the disk boots from it: no CD left in.
            self._eject(task)
            task.driver.management.set_boot_device(task, 'disk',
                                                   persistent=True)
            return
        url = boot_iso(task.node.instance_info or {})
        self._insert(task, url, 'instance_info %s' % BOOT_ISO)
        task.driver.management.set_boot_device(task, 'cdrom',
                                               persistent=True)

    def clean_up_instance(self, task: 'Task') -> None:
        self._eject(task)

    def instance_boot_device(self, task: 'Task') -> str | None:
        return None  # prepare_instance set the virtual CD (or the disk)

    def _insert(self, task: 'Task', url: str, source: str) -> None:
        bmc = driver_info.parse(task.node.driver_info)

        def insert(system: Any) -> bool:
            cds = _cds(system)
            if not cds:
                raise errors.RedfishUnsupported(
                    address=bmc.address, action='virtual media boot',
                    reason='its System has no virtual CD or DVD')
            media = cds[0]
            if media.inserted and media.image == url:
                return False
            if media.inserted:
                media.eject_media()
            client.insert_media(bmc, media, url, source)
            return True
        if client.call(task.ctx.conf, bmc, 'inserting virtual media',
                       insert):
            LOG.info('Node %(node)s: inserted %(url)s into the virtual CD',
                     {'node': task.node.uuid, 'url': url})

    def _eject(self, task: 'Task') -> None:
        ejected = client.call(task.ctx.conf,
                              driver_info.parse(task.node.driver_info),
                              'ejecting virtual media', _eject_all)
        if ejected:
            LOG.info('Node %s: ejected its virtual CD', task.node.uuid)
