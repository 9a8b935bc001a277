# SPDX-License-Identifier: Apache-2.0
"""The option groups, found once: :func:`group_modules` (every module of
``ferrum.conf`` but this one and ``validation``), registered by
:func:`ferrum.conf.register_opts` and listed by :func:`list_opts`, the
``oslo.config.opts`` entry point of oslo-config-generator (merged by
group: several modules add to [DEFAULT]).

It imports no group module by name, so that none is left out of either.
"""

import functools
import importlib
import pkgutil
import sys
from typing import Protocol, cast

from oslo_config import cfg

#: The modules of this package that are not option groups.
_NOT_GROUPS = ('opts', 'validation')
#: First, so that the sample file's [DEFAULT] opens with ferrum's own
#: options, as before the groups were discovered.
_FIRST = 'default'


class GroupModule(Protocol):
    """What each module of this package but ``opts`` and ``validation``
    defines: one option group (or more, [DEFAULT] among them)."""

    def register_opts(self, conf: cfg.ConfigOpts) -> None: ...

    def list_opts(self) -> dict[str, list[cfg.Opt]]: ...


@functools.cache
def group_modules() -> tuple[GroupModule, ...]:
    """Every option group module, found in this package as Placement
    finds its own (a new ``ferrum/conf/NAME.py`` is registered and in the
    sample file with nothing else to edit).

    :raises TypeError: a module lacks ``register_opts`` or ``list_opts``.
    """
    package = sys.modules[__package__]  # imported by now: ours is in it
    names = sorted((info.name for info in pkgutil.iter_modules(
                        package.__path__)
                    if info.name not in _NOT_GROUPS and not info.ispkg),
                   key=lambda name: (name != _FIRST, name))
    found: list[GroupModule] = []
    for name in names:
        module = importlib.import_module('%s.%s' % (__package__, name))
        if not (callable(getattr(module, 'register_opts', None))
                and callable(getattr(module, 'list_opts', None))):
            raise TypeError('ferrum/conf/%s.py is neither an option group '
                            '(register_opts and list_opts) nor one of %s'
                            % (name, ', '.join(_NOT_GROUPS)))
        found.append(cast(GroupModule, module))
    return tuple(found)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    merged: dict[str, list[cfg.Opt]] = {}
    for module in group_modules():
        for group, opts in module.list_opts().items():
            merged.setdefault(group, []).extend(opts)
    return list(merged.items())
