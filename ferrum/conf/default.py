# SPDX-License-Identifier: Apache-2.0
"""Options of the [DEFAULT] group: identity, enabled drivers and paths."""

import socket

from oslo_config import cfg

#: The interface kinds a hardware type composes, in the order they are loaded.
INTERFACE_KINDS: tuple[str, ...] = (
    'power', 'management', 'boot', 'deploy', 'inspect', 'vendor', 'network',
    'firmware')

_ENABLED_DEFAULTS: dict[str, list[str]] = {
    'power': ['fake'],
    'management': ['fake', 'noop'],
    'boot': ['fake', 'noop'],
    'deploy': ['fake'],
    'inspect': ['fake', 'noop'],
    'vendor': ['fake', 'noop'],
    'network': ['noop'],
    # Ironic's default: reading firmware versions is the operator's choice.
    'firmware': ['no-firmware'],
}


def _interface_opts() -> list[cfg.Opt]:
    opts: list[cfg.Opt] = []
    for kind in INTERFACE_KINDS:
        opts.append(cfg.ListOpt(
            'enabled_%s_interfaces' % kind,
            default=_ENABLED_DEFAULTS[kind],
            help='The %(kind)s interfaces this conductor loads, by '
                 'entry-point name in the '
                 'ferrum.hardware.interfaces.%(kind)s namespace. Every '
                 'enabled hardware type must support at least one of them, '
                 'and the conductor refuses to start when a name cannot be '
                 'loaded.' % {'kind': kind}))
        opts.append(cfg.StrOpt(
            'default_%s_interface' % kind,
            help='The %(kind)s interface given to a node that does not name '
                 'one. It must be enabled and supported by every enabled '
                 'hardware type. When unset, each hardware type\'s first '
                 'supported and enabled %(kind)s interface is used.'
                 % {'kind': kind}))
    return opts


opts: list[cfg.Opt] = [
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='localhost',
               help='The name this conductor registers under in the '
                    'conductors table and writes into node reservations. It '
                    'must be unique among the conductors sharing a database.'),
    cfg.ListOpt('enabled_hardware_types',
                default=['fake-hardware'],
                help='The hardware types this conductor loads, by entry-point '
                     'name in the ferrum.hardware.types namespace. The '
                     'conductor refuses to start when one cannot be loaded '
                     'or none of its interfaces is enabled.'),
    cfg.StrOpt('state_path',
               default='.ferrum',
               help='Directory for ferrum\'s local state: the embedded SQLite '
                    'database when [database]connection is not set. A '
                    'relative path is taken from the working directory.'),
    cfg.StrOpt('default_portgroup_mode', default='active-backup',
               mutable=True,
               help='The mode a new port group gets when its creator names '
                    'none (Ironic\'s option of the same name). The value is '
                    'passed on as the bond mode, so use one the Linux '
                    'bonding driver knows: balance-rr, active-backup, '
                    'balance-xor, broadcast, 802.3ad, balance-tlb or '
                    'balance-alb.'),
] + _interface_opts()


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {'DEFAULT': opts}
