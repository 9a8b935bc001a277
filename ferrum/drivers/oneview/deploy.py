# SPDX-License-Identifier: Apache-2.0
"""The ``oneview`` deploy interface: the ``ramdisk`` deploy with dynamic
allocation around it, and the dynamic-allocation periodic tasks.

* ``prepare`` applies a profile from the node's template (or reuses
  ferrum's); it fails, and the node goes to ``deploy failed``, when a
  OneView user has the hardware.
* ``prepare_cleaning`` does the same with a temporary profile; when OneView
  has the hardware it marks the node (``driver_internal_info
  oneview_error``) and fails, so the node goes to ``clean failed`` and the
  clean-failed periodic task moves it to manageable.
* ``tear_down_cleaning`` removes ferrum's profile. ``tear_down`` keeps it
  when automated cleaning follows (cleaning reuses it and then removes it,
  as upstream) and removes it otherwise, so an undeployed node never holds
  hardware it does not use.
"""

import logging
from typing import TYPE_CHECKING

from oslo_config import cfg

from ferrum.common import exception
from ferrum.common import states
from ferrum.drivers import base
from ferrum.drivers.ipmi import deploy as ramdisk
from ferrum.drivers.oneview import allocation
from ferrum.drivers.oneview import client as client_mod
from ferrum.drivers.oneview import driver_info
from ferrum.drivers.oneview import periodics
from ferrum.periodic import decorators

if TYPE_CHECKING:
    from ferrum.drivers.base import Task

LOG = logging.getLogger(__name__)


class OneViewDeploy(ramdisk.RamdiskDeploy):
    """Network-booted workload on hardware allocated from OneView."""

    def check_configuration(self, conf: cfg.ConfigOpts) -> None:
        """[oneview] must be complete; credentials are tried in the
        background (see ``client.check_configuration``)."""
        client_mod.check_configuration(conf)

    def get_properties(self) -> dict[str, str]:
        return dict(driver_info.PROPERTIES)

    def validate(self, task: 'Task') -> None:
        """Check the node's fields, then (reading OneView) that its template
        fits its hardware. Ownership is not checked here but when a
        profile is applied, so a deploy racing a OneView user ends in
        ``deploy failed`` as the spec describes."""
        super().validate(task)
        allocation.check_compatibility(task, allocation.client_for(task))

    def prepare(self, task: 'Task') -> None:
        if task.node.provision_state == states.DEPLOYING:
            allocation.allocate(task, allocation.deploy_profile_name(task))
        super().prepare(task)

    def tear_down(self, task: 'Task') -> None:
        node = allocation.params(task)
        ov = allocation.client_for(task)
        _hardware, who = allocation.judge(task, ov,
                                          node.server_hardware_uri)
        if who == driver_info.ONEVIEW:
            # A deploy that failed because OneView took the hardware: the
            # workload never ran, and the hardware is not ours to touch.
            LOG.warning('Node %(node)s: server hardware %(hw)s is in use by '
                        'OneView; tearing down without touching it',
                        {'node': task.node.uuid,
                         'hw': node.server_hardware_uri})
            return
        if who == driver_info.FREE:
            allocation.forget_if_removed(task, ov)
        super().tear_down(task)
        if not base.automated_clean_enabled(task):
            allocation.deallocate(task)

    def prepare_cleaning(self, task: 'Task') -> str | None:
        try:
            allocation.allocate(task, allocation.cleaning_profile_name(task))
        except allocation.HardwareInUse as exc:
            info = dict(task.node.driver_internal_info)
            info[allocation.ALLOCATION_ERROR] = (
                allocation.ALLOCATION_ERROR_VALUE)
            task.node.driver_internal_info = info
            task.node.save()
            raise exception.CleaningFailure(node=task.node.uuid,
                                            reason=str(exc)) from exc
        return None

    def tear_down_cleaning(self, task: 'Task') -> None:
        allocation.deallocate(task)

    # ---- periodic tasks (see ferrum.drivers.oneview.periodics) ----------

    @decorators.periodic(spacing=periodics.spacing)
    def periodic_check_nodes_taken_by_oneview(
            self, ctx: base.ConductorView) -> None:
        periodics.check_nodes_taken_by_oneview(ctx)

    @decorators.periodic(spacing=periodics.spacing)
    def periodic_check_nodes_freed_by_oneview(
            self, ctx: base.ConductorView) -> None:
        periodics.check_nodes_freed_by_oneview(ctx)

    @decorators.periodic(spacing=periodics.spacing)
    def periodic_check_nodes_taken_on_cleanfail(
            self, ctx: base.ConductorView) -> None:
        periodics.check_nodes_taken_on_cleanfail(ctx)
