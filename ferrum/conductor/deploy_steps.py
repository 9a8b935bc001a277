# SPDX-License-Identifier: Apache-2.0
"""The steps a deploy runs: the driver's, and those of the node's deploy
templates, as Ironic combines them.

A deploy template applies to a node deployed with its name among the
node's instance traits (``instance_info['traits']``, which must be traits
of the node). Each of its steps must be a deploy step of the node's driver
and get the arguments that step accepts (the required ones too, unless the
step is disabled); ``deploy.deploy`` may be disabled (priority 0) but not
moved; and two matching templates may not both name a step. A template's
step replaces the driver's step of the same interface and name, with its
priority (0 turns it off) and its arguments. Then the steps with a
priority above 0 run, highest first; equal priorities run by interface
(:data:`ferrum.drivers.steps.DEPLOY_INTERFACE_PRIORITY`), then in the
driver's order.

The steps are checked when the deploy is requested (the request is
refused, the node stays where it is) and again when it starts, after the
deploy interface's ``prepare``: a template may have changed meanwhile,
and then the deploy fails with the reason as ``last_error``.
"""

import collections
from typing import Any

from ferrum.common import exception
from ferrum.conductor import task_manager
from ferrum.drivers import steps as steps_mod
from ferrum.objects import deploy_template as template_obj
from ferrum.objects import trait as trait_obj

#: The deploy step no template may move (Ironic's "core" step).
_CORE = ('deploy', 'deploy')
_STEP_FIELDS = ('interface', 'step', 'args', 'priority')


def _key(step: dict[str, Any]) -> tuple[str, str]:
    return step['interface'], step['step']


def _name(key: tuple[str, str]) -> str:
    return '%s.%s' % key


def instance_traits(task: task_manager.Task) -> list[str]:
    """The node's instance traits, which must be among its traits.

    :raises InvalidParameterValue: they are not a list of strings, or name
        a trait the node does not have.
    """
    node = task.node
    wanted = node.instance_info.get('traits')
    if not wanted:
        return []
    if not (isinstance(wanted, list)
            and all(isinstance(t, str) for t in wanted)):
        raise exception.InvalidParameterValue(reason=(
            'Error parsing traits from Node %s instance_info field. A list '
            'of strings is expected.' % node.uuid))
    missing = sorted(set(wanted) - set(
        trait_obj.get_for_node(task.ctx.db, node.id)))
    if missing:
        raise exception.InvalidParameterValue(reason=(
            'Cannot specify instance traits that are not also set on the '
            'node. Node %s is missing traits %s'
            % (node.uuid, ', '.join(missing))))
    return wanted


def _driver_steps(task: task_manager.Task) -> list[dict[str, Any]]:
    """Every deploy step of the node's driver, enabled or not."""
    return [dict(step, args=step.get('args') or {})
            for _kind, iface in task.driver.interfaces()
            for step in iface.get_deploy_steps(task)]


def _errors(wanted: list[dict[str, Any]],
            known: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """What is wrong with the templates' steps ``wanted``."""
    errors = []
    for step in wanted:
        key = _key(step)
        if key not in known:
            errors.append('node does not support the deploy step %s'
                          % _name(key))
            continue
        argsinfo = known[key].get('argsinfo') or {}
        unexpected = sorted(set(step['args']) - set(argsinfo))
        if unexpected:
            errors.append('deploy step %s has these unexpected arguments: %s'
                          % (_name(key), ', '.join(unexpected)))
        if step['priority'] <= 0:
            continue
        missing = sorted(name for name, info in argsinfo.items()
                         if info.get('required') and name not in step['args'])
        if missing:
            errors.append('deploy step %s is missing these required '
                          'arguments: %s' % (_name(key), ', '.join(missing)))
        if key == _CORE:
            errors.append('deploy step %s on interface %s is a core step '
                          'and cannot be overridden by user steps. It may '
                          'be disabled by setting the priority to 0'
                          % (key[1], key[0]))
    counts = collections.Counter(_key(step) for step in wanted)
    twice = sorted(_name(key) for key, count in counts.items() if count > 1)
    if twice:
        errors.append('deploy steps from all deploy templates matching this '
                      "node's instance traits cannot have the same interface "
                      'and step. Duplicate deploy steps for %s'
                      % ', '.join(twice))
    return errors


def _template_steps(task: task_manager.Task,
                    known: dict[tuple[str, str], dict[str, Any]]
                    ) -> list[dict[str, Any]]:
    """The matching templates' steps, checked against the driver's."""
    traits = instance_traits(task)
    templates = template_obj.by_names(task.ctx.db, traits)
    wanted = [{field: step[field] for field in _STEP_FIELDS}
              for template in templates for step in template.steps]
    errors = _errors(wanted, known)
    if errors:
        raise exception.InvalidParameterValue(reason=(
            "Validation of deploy steps from deploy templates matching this "
            "node's instance traits failed. Matching deploy templates: %s. "
            "Errors: %s" % (','.join(t.name for t in templates),
                            '; '.join(errors))))
    return wanted


def for_deploy(task: task_manager.Task) -> list[dict[str, Any]]:
    """The deploy steps to run on ``task.node``, in order.

    Called with the node's exclusive lock; it only reads the node.

    :raises InvalidParameterValue: the instance traits or the templates'
        steps do not fit the node (see the module's documentation).
    """
    driver = _driver_steps(task)
    known = {_key(step): step for step in driver}
    from_templates = _template_steps(task, known)
    replaced = {_key(step) for step in from_templates}
    found = [step for step in driver
             if step['priority'] > 0 and _key(step) not in replaced]
    found += [step for step in from_templates if step['priority'] > 0]
    weight = steps_mod.DEPLOY_INTERFACE_PRIORITY
    # Stable: equal priorities and interfaces keep the driver's order.
    return sorted(found, key=lambda s: (-s['priority'],
                                        -weight.get(s['interface'], 0)))
