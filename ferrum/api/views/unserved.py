# SPDX-License-Identifier: Apache-2.0
"""Ironic interface kinds that ferrum does not serve, with their "none" names.

Clients expect every kind Ironic has on nodes and drivers; ferrum shows
these with the name Ironic gives an interface that does nothing.
"""

#: kind -> the implementation name shown for it.
INTERFACES: dict[str, str] = {
    'bios': 'no-bios',
    'console': 'no-console',
    'raid': 'no-raid',
    'rescue': 'no-rescue',
    'storage': 'noop',
}
