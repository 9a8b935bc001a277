# SPDX-License-Identifier: Apache-2.0
"""VIFs: attach, list and detach through the node's network interface.

Attaching and detaching take the node's exclusive lock, as in Ironic, and
work in any provision state; listing reads under a shared lock. What is
recorded where is the network interface's business (see
:mod:`ferrum.drivers.vifs` for what ferrum's own do).
"""

from typing import Any

from ferrum.conductor import context as context_mod
from ferrum.conductor import task_manager


def vif_list(ctx: context_mod.ConductorContext,
             node_id: int | str) -> list[dict[str, Any]]:
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='listing VIFs') as task:
        return task.driver.network.vif_list(task)


def vif_attach(ctx: context_mod.ConductorContext, node_id: int | str,
               vif_info: dict[str, Any]) -> None:
    with task_manager.acquire(ctx, node_id, purpose='attaching a VIF') as task:
        task.driver.network.validate(task)
        task.driver.network.vif_attach(task, vif_info)


def vif_detach(ctx: context_mod.ConductorContext, node_id: int | str,
               vif_id: str) -> None:
    with task_manager.acquire(ctx, node_id, purpose='detaching a VIF') as task:
        task.driver.network.vif_detach(task, vif_id)


def detach_all(task: task_manager.Task) -> None:
    """Detach every VIF of the locked node: its tenant lets it go (a
    tear-down), and the next one must not find them."""
    for vif in task.driver.network.vif_list(task):
        task.driver.network.vif_detach(task, str(vif['id']))
