# SPDX-License-Identifier: Apache-2.0
"""ferrum's inventory in OpenStack Placement: every node a resource provider.

- :mod:`~ferrum.placement.client`: the one module that talks to Placement;
- :mod:`~ferrum.placement.mapping`: what a node looks like there;
- :mod:`~ferrum.placement.outbox`: node changes recorded in their own
  transaction, claimed by one conductor each;
- :mod:`~ferrum.placement.sync`: one node pushed, writing only what differs;
- :mod:`~ferrum.placement.worker`: the conductor's drain thread, outage
  state and periodic reconcile;
- :mod:`~ferrum.placement.audit`: ferrum and Placement compared node by node;
- :mod:`~ferrum.placement.records`: what ferrum remembers of both.

Everything here is off while ``[placement]`` is unconfigured.
"""
