# SPDX-License-Identifier: Apache-2.0
"""Placement's resources, one module each, over the one transport
(:mod:`ferrum.placement.client`), as sushy's ``resources/`` over its
connector. Only this package builds Placement URLs and bodies.

- :mod:`~ferrum.placement.resources.providers`: a resource provider, its
  inventories, its traits, the consumers holding it; listings,
  allocation candidates and the reshaper;
- :mod:`~ferrum.placement.resources.classes`: custom resource classes and
  traits (ensure, delete, list);
- :mod:`~ferrum.placement.resources.consumers`: consumers
  (``/allocations``), read one by one and written only through
  :class:`~ferrum.placement.resources.consumers.Writer`;
- :mod:`~ferrum.placement.resources.retry`: the one retry on
  ``409 placement.concurrent_update``.
"""
