# SPDX-License-Identifier: Apache-2.0
"""The image a ``direct`` deploy writes: read from ``instance_info``,
checked before the node is touched, and described for the agent.

Whole-disk images only, ``raw`` or ``qcow2``, from an http:// or https://
URL the agent downloads itself:

* ``image_source``: the URL (Ironic's field; ``image_url`` is Ironic's
  internal name for the same and is taken when ``image_source`` is not a
  URL, as for an image that Glance would serve);
* ``image_os_hash_algo`` and ``image_os_hash_value`` (sha256, sha384 or
  sha512), or the older ``image_checksum`` (a sha256 or sha512 hex digest,
  or the URL of a checksum file); MD5 is refused, as the agent refuses it
  by default;
* ``image_disk_format``: ``raw`` or ``qcow2``; absent, the agent finds the
  format itself (and refuses what it does not permit).

Partition images (``kernel``/``ramdisk`` with a root partition) are not
served: doc/deploy.md says so.
"""

import re
from typing import Any

from ferrum.common import exception
from ferrum.drivers import fields

DISK_FORMATS = ('raw', 'qcow2')
HASH_ALGOS = ('sha256', 'sha384', 'sha512')
_WHERE = 'instance_info'
_HEX = re.compile(r'[0-9a-fA-F]+')
#: Hex digest lengths of the algorithms the agent takes as image_checksum.
_CHECKSUM_LENGTHS = {64: 'sha256', 128: 'sha512'}


def _url(info: dict[str, Any]) -> str:
    for field in ('image_source', 'image_url'):
        text = fields.string(info, field)
        if text and '://' in text:
            fields.http_url(text, field, 'use a URL the agent can download '
                            'without credentials', _WHERE)
            return text
    raise exception.MissingParameterValue(reason=(
        'instance_info image_source is missing: the http:// or https:// URL '
        'of the whole-disk image the agent writes (a "direct" deploy).'))


def _checksum(info: dict[str, Any]) -> dict[str, str]:
    algo = fields.string(info, 'image_os_hash_algo')
    value = fields.string(info, 'image_os_hash_value')
    if algo or value:
        if not (algo and value):
            raise exception.MissingParameterValue(reason=(
                'instance_info needs both image_os_hash_algo and '
                'image_os_hash_value, or neither (then image_checksum).'))
        algo = fields.choice(info, 'image_os_hash_algo', HASH_ALGOS, '')
        if not _HEX.fullmatch(value) or len(value) > 256:
            raise fields.fail('image_os_hash_value', 'must be a hex digest',
                              _WHERE)
        return {'os_hash_algo': algo, 'os_hash_value': value.lower()}
    checksum = fields.string(info, 'image_checksum')
    if not checksum:
        raise exception.MissingParameterValue(reason=(
            'instance_info has no image checksum: set image_os_hash_algo '
            'and image_os_hash_value (sha256, sha384 or sha512), or '
            'image_checksum, so that the agent can check what it wrote.'))
    if '://' in checksum:
        fields.http_url(checksum, 'image_checksum', 'use a URL the agent '
                        'can download without credentials', _WHERE)
        return {'checksum': checksum}
    if not _HEX.fullmatch(checksum) or len(checksum) not in _CHECKSUM_LENGTHS:
        raise fields.fail('image_checksum', (
            'must be a sha256 or sha512 hex digest, or the URL of a checksum '
            'file (an MD5 digest is not accepted: use image_os_hash_algo '
            'and image_os_hash_value)'), _WHERE)
    return {'checksum': checksum.lower()}


def validate(info: dict[str, Any]) -> None:
    """Check ``instance_info`` for a ``direct`` deploy, without I/O.

    :raises MissingParameterValue: no image URL, or no checksum.
    :raises InvalidParameterValue: a field is wrong (it is named).
    """
    image_info(info, 'validate', stream_raw=True)


def image_info(info: dict[str, Any], node_uuid: str,
               stream_raw: bool) -> dict[str, Any]:
    """What the agent's ``write_image`` step takes as ``image_info``."""
    url = _url(info)
    disk_format = info.get('image_disk_format')
    if disk_format not in (None, ''):
        disk_format = fields.choice(info, 'image_disk_format', DISK_FORMATS,
                                    '')
    result: dict[str, Any] = {
        'id': url.rsplit('/', 1)[-1][:255] or 'image',
        'urls': [url], 'node_uuid': node_uuid,
        'disk_format': disk_format or None, 'container_format': 'bare',
        'stream_raw_images': stream_raw, 'image_type': 'whole-disk',
    }
    result.update(_checksum(info))
    return result
