# SPDX-License-Identifier: Apache-2.0
"""``check_interface``: ferrum's contract checks, for any interface class.

The checks ferrum runs on its own drivers, in the style of pluggy's plugin
validation: run them in a driver package's tests and a broken declaration
fails there, with every problem listed, instead of at a conductor's start
or in the middle of a deploy.
"""

import inspect
import numbers
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from oslo_config import cfg

from ferrum import conf as conf_mod
from ferrum.common import exception
from ferrum.drivers import base
from ferrum.drivers import noop
from ferrum.drivers import steps
from ferrum.drivers.fake import interfaces as fake
from ferrum.objects import node as node_obj
from ferrum.periodic import decorators


class ContractError(AssertionError):
    """An interface breaks the driver contract; the message lists how."""


class _FakeTask:
    """A task on an unsaved node, for ``validate``: nothing else works.

    Its driver is the checked interface, with ferrum's fake interfaces for
    the other kinds (a deploy interface may validate its boot interface).
    """

    def __init__(self, driver_info: Mapping[str, Any],
                 checked: base.BaseInterface | None = None,
                 instance_info: Mapping[str, Any] | None = None) -> None:
        values: dict[str, Any] = dict.fromkeys(node_obj.Node.COLUMNS)
        values.update(id=0, uuid=str(uuid.uuid4()), driver='check',
                      provision_state='enroll', maintenance=False,
                      driver_info=dict(driver_info),
                      instance_info=dict(instance_info or {}))
        self.node = node_obj.Node(None, values)
        self.shared = True
        self.purpose = 'contract check'
        parts: dict[str, Any] = {
            'power': fake.FakePower(), 'management': fake.FakeManagement(),
            'boot': fake.FakeBoot(), 'deploy': fake.FakeDeploy(),
            'inspect': fake.FakeInspect(), 'vendor': fake.FakeVendor(),
            'network': noop.NoopNetwork(), 'firmware': noop.NoFirmware()}
        if checked is not None:
            parts[checked.kind] = checked
        self.driver = base.Driver(hardware_type='check', **parts)

    def __getattr__(self, name: str) -> Any:
        raise ContractError(
            'validate() used task.%s; it may only read task.node and '
            'task.driver (and task.shared, task.purpose): it must not '
            'contact the hardware or the conductor' % name)


def _kind_of(cls: type) -> str:
    for kind, interface in base.INTERFACES.items():
        if issubclass(cls, interface):
            return kind
    raise ContractError('%s is not a subclass of any interface in '
                        'ferrum.drivers.base (%s)' % (
                            cls.__name__, ', '.join(
                                c.__name__
                                for c in base.INTERFACES.values())))


def _takes(func: Callable[..., Any], args: list[str]) -> str | None:
    """Why ``func(self, task, **{a: ...})`` cannot be called, or None."""
    try:
        inspect.signature(func).bind(None, None, **dict.fromkeys(args))
    except TypeError as exc:
        return str(exc)
    return None


def _check_properties(obj: base.BaseInterface, problems: list[str]) -> None:
    props = obj.get_properties()
    if not isinstance(props, dict):
        problems.append('get_properties() must return a dict, not %s'
                        % type(props).__name__)
        return
    for key, text in props.items():
        if not isinstance(key, str) or not isinstance(text, str) or not text:
            problems.append('get_properties()[%r] needs a description '
                            'string' % (key,))
    for secret in sorted(set(obj.secret_properties) - set(props)):
        problems.append('secret_properties lists %r, which get_properties() '
                        'does not declare' % secret)


def _check_steps(obj: base.BaseInterface, kind: str,
                 problems: list[str]) -> None:
    for step in steps.collect(obj, kind):
        name = step['step']
        argsinfo = step['argsinfo'] or {}
        for arg, info in argsinfo.items():
            if not isinstance(info, dict) or not info.get('description'):
                problems.append('clean step %s: argument %r needs a '
                                '"description"' % (name, arg))
        why = _takes(getattr(type(obj), name), list(argsinfo))
        if why:
            problems.append('clean step %s cannot be called with the task '
                            'and its argsinfo arguments: %s' % (name, why))


def _check_periodics(cls: type, conf: cfg.ConfigOpts,
                     problems: list[str]) -> None:
    for name in sorted(dir(cls)):
        spec = getattr(getattr(cls, name, None), decorators.MARK, None)
        if not isinstance(spec, decorators.PeriodicSpec):
            continue
        try:
            spacing = spec.spacing(conf)
        except Exception as exc:
            problems.append('periodic %s: its spacing failed on the default '
                            'configuration: %s: %s' % (
                                name, type(exc).__name__, exc))
            continue
        if not isinstance(spacing, numbers.Real) or spacing < 0:
            problems.append('periodic %s: spacing must be a number of '
                            'seconds >= 0 (0 disables), got %r'
                            % (name, spacing))
        params = list(inspect.signature(getattr(cls, name)).parameters)
        if len(params) != 2:
            problems.append('periodic %s must take (self, conductor), not %s'
                            % (name, ', '.join(params)))


def _check_passthru(obj: base.BaseInterface, problems: list[str]) -> None:
    if not isinstance(obj, base.VendorInterface):
        return
    allowed = {'GET', 'POST', 'PUT', 'PATCH', 'DELETE'}
    for name, spec in obj.vendor_routes().items():
        if not spec.http_methods or set(spec.http_methods) - allowed:
            problems.append('passthru %s: http_methods must be some of %s'
                            % (name, sorted(allowed)))
        if spec.async_call and not spec.require_exclusive_lock:
            problems.append('passthru %s: an asynchronous method runs with '
                            'the exclusive lock; drop '
                            'require_exclusive_lock=False' % name)


def _check_validate(obj: base.BaseInterface,
                    driver_info: Mapping[str, Any] | None,
                    instance_info: Mapping[str, Any] | None,
                    problems: list[str]) -> None:
    try:
        obj.validate(_FakeTask({}, obj))
    except exception.Invalid:
        pass  # refusing empty driver_info with a 400 is right
    except ContractError as exc:
        problems.append(str(exc))
    except Exception as exc:
        problems.append('validate() on a node with empty driver_info must '
                        'pass or raise MissingParameterValue / '
                        'InvalidParameterValue, not %s: %s'
                        % (type(exc).__name__, exc))
    if driver_info is None:
        return
    try:
        obj.validate(_FakeTask(driver_info, obj, instance_info))
    except Exception as exc:
        problems.append('validate() refused the driver_info (and '
                        'instance_info) given as valid: %s: %s'
                        % (type(exc).__name__, exc))


def check_interface(cls: type, driver_info: Mapping[str, Any] | None = None,
                    conf: cfg.ConfigOpts | None = None,
                    instance_info: Mapping[str, Any] | None = None) -> None:
    """Check an interface class against the driver contract.

    Instantiates it as the loader does (no arguments), then checks: its
    kind, that no abstract method is left, ``get_properties`` and
    ``secret_properties``, every clean step (priority, argument
    descriptions, callable with its arguments), every periodic mark (its
    spacing on the default configuration, its signature), every vendor
    passthru mark, ``check_configuration`` on the default configuration
    (a ferrum exception is fine: it stops the conductor cleanly), and
    ``validate`` on a node with empty ``driver_info`` (it may only refuse
    with a 400 error) and, when given, with ``driver_info`` (it must pass;
    the node then has ``instance_info`` too, for interfaces that read it,
    such as a boot interface's image).

    :raises ContractError: listing every problem found.
    """
    kind = _kind_of(cls)
    if inspect.isabstract(cls):
        raise ContractError('%s leaves abstract methods unimplemented: %s'
                            % (cls.__name__, ', '.join(
                                sorted(getattr(cls, '__abstractmethods__',
                                               ())))))
    conf = conf or conf_mod.new_conf()
    obj = cls()
    problems: list[str] = []
    if obj.kind != kind:
        problems.append('kind is %r but the class is a %s interface'
                        % (obj.kind, kind))
    _check_properties(obj, problems)
    _check_steps(obj, kind, problems)
    _check_periodics(cls, conf, problems)
    _check_passthru(obj, problems)
    try:
        obj.check_configuration(conf)
    except exception.FerrumException:
        pass
    except Exception as exc:
        problems.append('check_configuration() must raise a ferrum '
                        'exception naming the option, not %s: %s'
                        % (type(exc).__name__, exc))
    _check_validate(obj, driver_info, instance_info, problems)
    if problems:
        raise ContractError('%s breaks the driver contract:\n- %s'
                            % (cls.__name__, '\n- '.join(problems)))
