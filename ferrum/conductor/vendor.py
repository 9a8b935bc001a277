# SPDX-License-Identifier: Apache-2.0
"""Vendor passthru: calling the methods a vendor interface marks.

A method marked with :func:`ferrum.drivers.base.passthru` is called with
the request body as keyword arguments, under the lock it asks for. An
asynchronous one runs on a worker after the request is answered; what it
raises becomes the node's ``last_error`` (as any driver failure does).
"""

import inspect
from collections.abc import Callable
from typing import Any

from ferrum.common import exception
from ferrum.conductor import context as context_mod
from ferrum.conductor import driver_errors
from ferrum.conductor import task_manager


def methods(ctx: context_mod.ConductorContext,
            node_id: int | str) -> dict[str, dict[str, Any]]:
    """``{name: {http_methods, async, ...}}`` of the node's vendor methods."""
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='listing vendor methods') as task:
        return {name: spec.as_dict() for name, spec
                in task.driver.vendor.vendor_routes().items()}


def call(ctx: context_mod.ConductorContext, node_id: int | str,
         method: str, http_method: str,
         info: dict[str, Any]) -> dict[str, Any]:
    """Call a vendor method; ``{'async': bool, 'return': value}``.

    :raises NoSuchPassthru: the node's vendor interface has no such method.
    :raises PassthruHttpMethod: the method does not take ``http_method``.
    :raises InvalidParameterValue: the body does not fit its arguments.
    """
    with task_manager.acquire(ctx, node_id, shared=True,
                              purpose='vendor passthru %s' % method) as task:
        vendor = task.driver.vendor
        spec = vendor.vendor_routes().get(method)
        if spec is None:
            raise exception.NoSuchPassthru(method=method[:100],
                                           node=task.node.uuid)
        if http_method.upper() not in spec.http_methods:
            raise exception.PassthruHttpMethod(
                method=method, http_method=http_method[:10],
                allowed=', '.join(spec.http_methods))
        if spec.require_exclusive_lock or spec.async_call:
            task.upgrade_lock()
        vendor.validate(task)
        func: Callable[..., Any] = getattr(vendor, method)
        try:
            # Checked here, so a wrong body is the caller's 400, not a
            # failure recorded on the node later.
            inspect.signature(func).bind(task, **info)
        except TypeError as exc:
            raise exception.InvalidParameterValue(reason=(
                'Vendor passthru method "%s": %s' % (method, exc))) from exc
        if spec.async_call:
            task.spawn_after(_run, task, func, info)
            result = None
        else:
            result = func(task, **info)
    if spec.async_call:
        task.wait_for_worker(ctx.conf.conductor.action_wait_timeout)
    return {'async': spec.async_call, 'return': result}


def _run(task: task_manager.Task, func: Callable[..., Any],
         info: dict[str, Any]) -> None:
    try:
        func(task, **info)
    except Exception as exc:
        task.node.last_error = driver_errors.describe(
            task, 'Vendor passthru %s failed' % func.__name__, exc)
