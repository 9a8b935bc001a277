# SPDX-License-Identifier: Apache-2.0
"""The ``clean_step`` decorator, and discovery of the steps it marks.

A clean step is a method of an interface, marked with its priority and the
arguments it accepts. Automated cleaning runs the steps whose priority is
above 0, highest first; manual cleaning runs the steps the operator names,
whatever their priority.
"""

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar('F', bound=Callable[..., Any])
_MARK = '_ferrum_clean_step'


@dataclasses.dataclass(frozen=True)
class StepInfo:
    priority: int
    abortable: bool
    argsinfo: dict[str, dict[str, Any]] | None


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
    if not isinstance(priority, int) or priority < 0:
        raise ValueError('clean_step priority must be an int >= 0, got %r'
                         % (priority,))

    def mark(func: F) -> F:
        setattr(func, _MARK, StepInfo(priority, abortable, argsinfo))
        return func
    return mark


def collect(interface: object, kind: str) -> list[dict[str, Any]]:
    """The clean steps ``interface`` declares, as Ironic-style step dicts."""
    steps = []
    for name in sorted(dir(type(interface))):
        info = getattr(getattr(type(interface), name, None), _MARK, None)
        if isinstance(info, StepInfo):
            steps.append({'step': name, 'priority': info.priority,
                          'interface': kind, 'abortable': info.abortable,
                          'argsinfo': info.argsinfo})
    return steps
