# SPDX-License-Identifier: Apache-2.0
"""ferrum in OpenStack Placement: every node a resource provider, every
allocation (with ``[allocation] backend = placement``) and every lease a
consumer.

- :mod:`~ferrum.placement.client`: the transport (microversion, errors);
- :mod:`~ferrum.placement.resources`: the only layer that builds
  Placement URLs and bodies, one module per resource (providers, classes
  and traits, consumers with their one writer, and the one retry);
- :mod:`~ferrum.placement.mapping`: what a node looks like there;
- :mod:`~ferrum.placement.outbox`: node changes recorded in their own
  transaction, claimed by one conductor each;
- :mod:`~ferrum.placement.sync`: one node pushed, writing only what
  differs;
- :mod:`~ferrum.placement.worker`: the conductor's drain thread, outage
  state and periodic reconcile;
- :mod:`~ferrum.placement.service`: the conductor's Placement handle
  (``ctx.placement``);
- :mod:`~ferrum.placement.claims`: allocations' consumers, claimed and
  released; :mod:`~ferrum.placement.releases`, the queue of releases
  still to send;
- :mod:`~ferrum.placement.errors`: every error of this package;
- :mod:`~ferrum.placement.reservations`: a lease in Placement, its
  reservation class and its consumer;
- :mod:`~ferrum.placement.audit`, :mod:`~ferrum.placement.consumer_audit`
  and :mod:`~ferrum.placement.lease_audit`: ferrum and Placement compared
  node by node, allocation by allocation, lease by lease;
- :mod:`~ferrum.placement.records`: what ferrum remembers of both;
- :mod:`~ferrum.placement.status`: the sync state an operator reads.

Everything here is off while ``[placement]`` is unconfigured.
"""
