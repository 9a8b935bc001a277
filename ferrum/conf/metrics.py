# SPDX-License-Identifier: Apache-2.0
"""Options of the Prometheus metrics: [metrics] (see doc/observability.md).

The API serves ``GET /metrics`` on its own address; each conductor serves
its service metrics on ``host_ip``/``port`` of this group.
"""

import ipaddress

from oslo_config import cfg

GROUP = 'metrics'

opts: list[cfg.Opt] = [
    cfg.HostAddressOpt('host_ip', default='127.0.0.1',
                       help="The IP address or host name a conductor's "
                            'metrics endpoint (GET /metrics, Prometheus '
                            'text format, no authentication) listens on. '
                            'The metrics hold counts and timings only, no '
                            'node data; bind it to the network Prometheus '
                            'scrapes from, or keep the loopback default.'),
    cfg.PortOpt('port', default=0,
                help="The TCP port of a conductor's metrics endpoint. 0 "
                     '(the default) serves none, so that several '
                     'conductors on one host do not collide; the usual '
                     'choice is 9611. The all-in-one ferrum (and ferrum-api '
                     'with its local conductor) also serves these metrics '
                     "on the API's /metrics."),
    cfg.IntOpt('fleet_cache_seconds', default=5, min=0, mutable=True,
               help="How long, in seconds, the API's /metrics reuses the "
                    'fleet counts it read from the database (nodes by '
                    'state, allocations, leases, conductors, the Placement '
                    'backlog): each refresh costs three grouped queries, so '
                    'several Prometheus servers scraping at once cost the '
                    'database one read per interval. 0 reads them at every '
                    'scrape.'),
    cfg.ListOpt('allowed_scrapers', default=[],
                help='Networks (CIDRs such as 10.0.5.0/24 or a single '
                     'address such as 192.0.2.7) whose clients may read '
                     "the API's /metrics without credentials under "
                     'auth_strategy keystone or http_basic. The address is '
                     "the connection's peer as the API server sees it, not "
                     'an X-Forwarded-For header. Other callers need a '
                     'token passing the baremetal:metrics:get rule (a '
                     'system reader by default) or, under http_basic, a '
                     'user of the htpasswd file. Empty by default.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(opts, group=GROUP)


def list_opts() -> dict[str, list[cfg.Opt]]:
    """The group's options for the sample file (:mod:`ferrum.conf.opts`)."""
    return {GROUP: opts}


def scraper_networks(conf: cfg.ConfigOpts) -> list[
        ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``allowed_scrapers`` parsed.

    :raises ValueError: an entry is no network, naming it.
    """
    networks = []
    for entry in conf.metrics.allowed_scrapers:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(
                '[metrics] allowed_scrapers: %r is not an address or a '
                'network in CIDR notation (such as 10.0.5.0/24).'
                % entry) from None
    return networks
