# SPDX-License-Identifier: Apache-2.0
"""The config drive the agent writes beside the image.

A deploy's ``configdrive`` (``PUT .../states/provision``, API 1.56) is
either what the agent takes as it is (a base64 gzipped ISO 9660 image, or
its URL), or a dict of ``meta_data``, ``user_data``, ``network_data`` and
``vendor_data``, as metalsmith and nova send it; ferrum then builds the
ISO, as Ironic does, in OpenStack's config-drive layout (label
``config-2``, ``openstack/latest/...``), with ``genisoimage`` (or
``mkisofs``/``xorrisofs``).
"""

import base64
import gzip
import json
import os
import shutil
import subprocess
import tempfile
from typing import Any

from ferrum.common import exception

#: The ISO tools that build it, first found first used.
_TOOLS = ('genisoimage', 'mkisofs', 'xorrisofs')
_FILES = {'meta_data': 'meta_data.json', 'network_data': 'network_data.json',
          'vendor_data': 'vendor_data.json'}
#: Seconds one ISO may take to build (a few KiB of files).
_TIMEOUT = 60


def for_agent(configdrive: Any, node_uuid: str) -> str | None:
    """What the agent's ``write_image`` takes as ``configdrive``.

    :raises InvalidParameterValue: neither text nor a dict.
    :raises DriverError: no ISO tool, or it failed.
    """
    if configdrive is None or configdrive == '':
        return None
    if isinstance(configdrive, str):
        return configdrive
    if not isinstance(configdrive, dict):
        raise exception.InvalidParameterValue(reason=(
            'configdrive must be a string (a base64 gzipped ISO or its URL) '
            'or an object of meta_data, user_data, network_data and '
            'vendor_data, not %s' % type(configdrive).__name__))
    return _build(configdrive, node_uuid)


def _build(contents: dict[str, Any], node_uuid: str) -> str:
    tool = next((found for found in map(shutil.which, _TOOLS) if found),
                None)
    if tool is None:
        raise exception.DriverError(reason=(
            'Node %s: building its config drive needs genisoimage (or '
            'mkisofs, xorrisofs) on the conductor; install the Debian '
            'package genisoimage.' % node_uuid))
    with tempfile.TemporaryDirectory(prefix='ferrum-configdrive-') as tmp:
        root = os.path.join(tmp, 'root')
        latest = os.path.join(root, 'openstack', 'latest')
        os.makedirs(latest)
        for key, name in _FILES.items():
            with open(os.path.join(latest, name), 'w') as out:
                json.dump(contents.get(key) or {}, out)
        user_data = contents.get('user_data')
        if user_data:
            with open(os.path.join(latest, 'user_data'), 'wb') as out:
                out.write(user_data.encode() if isinstance(user_data, str)
                          else json.dumps(user_data).encode())
        iso = os.path.join(tmp, 'configdrive.iso')
        try:
            subprocess.run(
                [tool, '-o', iso, '-ldots', '-allow-lowercase',
                 '-allow-multidot', '-l', '-publisher', 'ferrum', '-quiet',
                 '-J', '-r', '-V', 'config-2', root],
                check=True, capture_output=True, timeout=_TIMEOUT)
        except (OSError, subprocess.SubprocessError) as exc:
            stderr = getattr(exc, 'stderr', b'') or b''
            raise exception.DriverError(reason=(
                'Node %s: building its config drive with %s failed: %s %s'
                % (node_uuid, os.path.basename(tool), exc,
                   stderr.decode(errors='replace')[:300]))) from None
        with open(iso, 'rb') as source:
            return base64.b64encode(gzip.compress(source.read())).decode()
