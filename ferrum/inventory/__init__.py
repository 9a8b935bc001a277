# SPDX-License-Identifier: Apache-2.0
"""ferrum's inventory in OpenStack Placement: every node a resource provider.

- :mod:`~ferrum.inventory.client`: the one module that talks to Placement;
- :mod:`~ferrum.inventory.mapping`: what a node looks like there;
- :mod:`~ferrum.inventory.outbox`: node changes recorded in their own
  transaction, claimed by one conductor each;
- :mod:`~ferrum.inventory.sync`: one node pushed, writing only what differs;
- :mod:`~ferrum.inventory.worker`: the conductor's drain thread, outage
  state and periodic reconcile;
- :mod:`~ferrum.inventory.audit`: ferrum and Placement compared node by node;
- :mod:`~ferrum.inventory.records`: what ferrum remembers of both.

Everything here is off while ``[placement]`` is unconfigured.
"""
