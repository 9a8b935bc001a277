# SPDX-License-Identifier: Apache-2.0
"""``/v1/shards``: the shards nodes are in, with their node counts (1.82).

As Ironic: ``baremetal:shards:get`` (a system reader), 404 before 1.82,
and a shard cannot be fetched alone (``/v1/shards/{shard}`` is 404).
"""

from typing import Any

from ferrum.api import access
from ferrum.api import microversion
from ferrum.api import services
from ferrum.objects import shard as shard_obj

_MINOR = 82


def list_shards() -> dict[str, Any]:
    microversion.endpoint(_MINOR, '/v1/shards')
    access.check('baremetal:shards:get')
    return {'shards': shard_obj.counts(services.db())}
