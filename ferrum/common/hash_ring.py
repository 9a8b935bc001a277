# SPDX-License-Identifier: Apache-2.0
"""Which live conductor handles a node: a consistent hash ring per driver.

The conductors that qualify for a node are the live ones in its conductor
group that registered its hardware type. A ``tooz`` hash ring over their
hostnames maps the node's UUID to one of them, so when a conductor joins
or leaves only the nodes of its share of the ring move. The API's
``conductor`` field and the JSON-RPC routing both ask this module, so they
always agree for the same view of the conductors table.
"""

import functools
from collections.abc import Mapping

from tooz import hashring

#: hostname -> (conductor group, hardware types), live conductors only.
Conductors = Mapping[str, tuple[str, frozenset[str]]]


def hosts_for(conductors: Conductors, driver: str, group: str
              ) -> tuple[str, ...]:
    """The qualifying hostnames for a driver and group, sorted."""
    return tuple(sorted(host for host, (host_group, types)
                        in conductors.items()
                        if host_group == group and driver in types))


@functools.lru_cache(maxsize=64)
def _ring(hosts: tuple[str, ...]) -> hashring.HashRing:
    # Keyed by the member list: a membership change builds a new ring.
    return hashring.HashRing(hosts)


def conductor_for(conductors: Conductors, driver: str, group: str,
                  node_uuid: str) -> str | None:
    """The hostname that handles the node, or None when none qualifies."""
    hosts = hosts_for(conductors, driver, group)
    if not hosts:
        return None
    return str(next(iter(_ring(hosts).get_nodes(node_uuid.encode()))))
