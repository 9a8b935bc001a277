# SPDX-License-Identifier: Apache-2.0
"""Options of the [allocation] group: where an allocation's claim lives."""

from oslo_config import cfg

GROUP = 'allocation'
DATABASE = 'database'
PLACEMENT = 'placement'

opts: list[cfg.Opt] = [
    cfg.StrOpt('backend', default=DATABASE, choices=[
        (DATABASE, 'Allocations are claimed in ferrum\'s database only: '
                   'the fastest, for nodes ferrum alone hands out.'),
        (PLACEMENT, 'Each allocation is also a consumer in OpenStack '
                    'Placement holding its node\'s unit, claimed there '
                    'before the database, so that nova, Blazar or another '
                    'ferrum sharing the nodes never hands out the same '
                    'node. Needs a working [placement] configuration.')],
               help='Where allocations are claimed. Switching needs no '
                    'database migration; allocations made before a switch '
                    'to "placement" get their consumers from "ferrum-'
                    'placement audit --heal".'),
    cfg.StrOpt('default_project', default='ferrum',
               help='Placement project_id of the consumers of allocations '
                    'without an owner (with backend = placement).'),
    cfg.StrOpt('default_user', default='ferrum',
               help='Placement user_id of every allocation\'s consumer '
                    '(with backend = placement): ferrum allocations have no '
                    'user of their own.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}


def through_placement(conf: cfg.ConfigOpts) -> bool:
    """Whether allocations are claimed in Placement. A conductor chooses
    its backend from it once, when it starts
    (:func:`ferrum.allocation.backends.choose`); its allocation flows ask
    ``ctx.allocations``, never this."""
    return bool(conf.allocation.backend == PLACEMENT)
