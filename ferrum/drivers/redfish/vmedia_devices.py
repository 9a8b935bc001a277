# SPDX-License-Identifier: Apache-2.0
"""A System's virtual media devices, as the node API attaches, detaches
and lists them (API 1.89 and 1.93), through the ``redfish`` management
interface.

Ironic's device names map to Redfish media types as Ironic maps them:
``cdrom`` to a CD (or DVD) drive, ``floppy`` to a floppy, ``disk`` to a
USB stick. The BMC downloads the image itself, from the URL the client
gave.
"""

from typing import TYPE_CHECKING, Any

from ferrum.drivers.redfish import client
from ferrum.drivers.redfish import driver_info
from ferrum.drivers.redfish import errors

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

_TYPES = client.VirtualMediaType
#: Ironic's virtual media device -> the Redfish media types it takes.
DEVICES: dict[str, tuple[Any, ...]] = {
    'cdrom': (_TYPES.CD, _TYPES.DVD),
    'floppy': (_TYPES.FLOPPY,),
    'disk': (_TYPES.USB_STICK,),
}


def _of(system: Any, device: str) -> list[Any]:
    return [media for media in system.virtual_media.get_members()
            if any(kind in DEVICES[device] for kind in media.media_types)]


def attach(task: 'Task', device: str, url: str) -> None:
    """Insert ``url`` into the System's first ``device``, ejecting what it
    held. Idempotent: the same image already there is left in."""
    bmc = driver_info.parse(task.node.driver_info)

    def insert(system: Any) -> None:
        found = _of(system, device)
        if not found:
            raise errors.RedfishUnsupported(
                address=bmc.address, action='attaching virtual media',
                reason='its System has no virtual %s' % device)
        media = found[0]
        if media.inserted and media.image == url:
            return
        if media.inserted:
            media.eject_media()
        client.insert_media(bmc, media, url, 'the request\'s image_url')
    client.call(task.ctx.conf, bmc, 'attaching virtual media', insert)


def detach(task: 'Task', devices: list[str] | None) -> None:
    """Eject every medium of ``devices`` (all of them when None)."""
    def eject(system: Any) -> None:
        for device in devices or list(DEVICES):
            for media in _of(system, device):
                if media.inserted:
                    media.eject_media()
    client.call(task.ctx.conf, driver_info.parse(task.node.driver_info),
                'detaching virtual media', eject)


def listing(task: 'Task') -> list[dict[str, Any]]:
    """Every virtual medium: its media types, whether it holds an image,
    and which (Ironic's shape)."""
    def read(system: Any) -> list[dict[str, Any]]:
        return [{'media_types': [kind.value for kind in media.media_types],
                 'inserted': media.inserted, 'image': media.image}
                for media in system.virtual_media.get_members()]
    return client.call(task.ctx.conf, driver_info.parse(task.node.driver_info),
                       'reading virtual media', read)
