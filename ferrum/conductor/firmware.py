# SPDX-License-Identifier: Apache-2.0
"""Refreshing a node's firmware list from its firmware interface.

Ironic caches the firmware components when a verification ends and when
cleaning starts; so does ferrum. A reading that fails is logged and
changes nothing: the list is information, and an unreadable version must
not stop a node from becoming ``manageable`` or being cleaned.
"""

import logging

from oslo_db import exception as db_exc

from ferrum.common import exception
from ferrum.conductor import task_manager
from ferrum.objects import firmware_component

LOG = logging.getLogger(__name__)


def cache_components(task: task_manager.Task) -> None:
    """Read the node's firmware and record it; never raises."""
    node = task.node
    try:
        task.driver.firmware.validate(task)
        found = task.driver.firmware.read_components(task)
        if found is None:  # no-firmware: nothing read, nothing written
            return
        firmware_component.record(task.ctx.db, node.id, found)
    except (exception.FerrumException, db_exc.DBError) as exc:
        LOG.warning('Node %(node)s: its firmware components were not '
                    'refreshed through the %(iface)s firmware interface: '
                    '%(exc)s', {'node': node.uuid,
                                'iface': node.firmware_interface, 'exc': exc})
        return
    except Exception:  # a bug in the driver: the traceback says where
        LOG.exception('Node %(node)s: the %(iface)s firmware interface '
                      'failed while reading the firmware components',
                      {'node': node.uuid, 'iface': node.firmware_interface})
        return
    LOG.debug('Node %(node)s: firmware components %(found)s recorded',
              {'node': node.uuid, 'found': ', '.join(
                  '%s=%s' % (c.component, c.current_version) for c in found)})
