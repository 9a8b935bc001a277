# SPDX-License-Identifier: Apache-2.0
"""The ``clean_step`` and ``deploy_step`` decorators, and discovery of the
steps they mark.

A step is a method of an interface, marked with its priority and the
arguments it accepts. Automated cleaning runs the clean steps whose
priority is above 0, highest first; manual cleaning runs the steps the
operator names, whatever their priority. A deploy runs the deploy steps
whose priority is above 0, highest first (Ironic's deploy steps).
"""

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar('F', bound=Callable[..., Any])
#: The attribute each decorator sets, by step type.
_MARKS = {'clean': '_ferrum_clean_step', 'deploy': '_ferrum_deploy_step'}


#: Ironic's deploy step interfaces, each with its weight when two steps
#: have the same priority: the step of the higher weight runs first. These
#: are the interfaces a deploy template may name a step of.
DEPLOY_INTERFACE_PRIORITY: dict[str, int] = {
    'vendor': 7, 'power': 6, 'management': 5, 'firmware': 4, 'deploy': 3,
    'bios': 2, 'raid': 1}


@dataclasses.dataclass(frozen=True)
class StepInfo:
    priority: int
    abortable: bool
    argsinfo: dict[str, dict[str, Any]] | None


def _marker(step_type: str, priority: int, abortable: bool,
            argsinfo: dict[str, dict[str, Any]] | None
            ) -> Callable[[F], F]:
    if not isinstance(priority, int) or priority < 0:
        raise ValueError('%s_step priority must be an int >= 0, got %r'
                         % (step_type, priority))

    def mark(func: F) -> F:
        setattr(func, _MARKS[step_type],
                StepInfo(priority, abortable, argsinfo))
        return func
    return mark


def clean_step(priority: int, abortable: bool = False,
               argsinfo: dict[str, dict[str, Any]] | None = None
               ) -> Callable[[F], F]:
    """Mark an interface method as a clean step.

    :param priority: order in automated cleaning (higher runs first); 0 means
        the step only runs when asked for in manual cleaning.
    :param abortable: whether the step may be interrupted by ``abort``.
    :param argsinfo: the arguments the step accepts, as
        ``{name: {'description': str, 'required': bool}}``.
    """
    return _marker('clean', priority, abortable, argsinfo)


def deploy_step(priority: int,
                argsinfo: dict[str, dict[str, Any]] | None = None
                ) -> Callable[[F], F]:
    """Mark an interface method as a deploy step.

    :param priority: order in a deploy (higher runs first); 0 means the step
        does not run unless a deploy template asks for it.
    :param argsinfo: the arguments the step accepts, as for ``clean_step``.
    """
    return _marker('deploy', priority, False, argsinfo)


def collect(interface: object, kind: str,
            step_type: str = 'clean') -> list[dict[str, Any]]:
    """The steps of ``step_type`` that ``interface`` declares, as
    Ironic-style step dicts (new ones: the caller may change them)."""
    key = (type(interface), kind, step_type)
    found = _DECLARED.get(key)
    if found is None:
        found = _DECLARED[key] = _declared(*key)
    return [dict(step) for step in found]


#: Each class's steps, read once: every deploy and cleaning lists every
#: interface's steps, and reading all of a class's attributes costs more
#: than the rest of a fake deploy (the marks never change after import).
#: Two threads may both fill an entry, with the same value.
_DECLARED: dict[tuple[type, str, str], tuple[dict[str, Any], ...]] = {}


def _declared(cls: type, kind: str,
              step_type: str) -> tuple[dict[str, Any], ...]:
    mark = _MARKS[step_type]
    steps = []
    for name in sorted(dir(cls)):
        info = getattr(getattr(cls, name, None), mark, None)
        if isinstance(info, StepInfo):
            step = {'step': name, 'priority': info.priority,
                    'interface': kind, 'argsinfo': info.argsinfo}
            if step_type == 'clean':
                step['abortable'] = info.abortable
            steps.append(step)
    return tuple(steps)
