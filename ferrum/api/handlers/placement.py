# SPDX-License-Identifier: Apache-2.0
"""``/v1/placement/status``: ferrum's extension showing the Placement sync
state (backlog, each conductor's view of Placement, nodes whose push was
refused). Not an Ironic resource, so not tied to a microversion, like
``/v1/leases``; documented in doc/placement.md.
"""

from typing import Any

from ferrum.api import access
from ferrum.api import services
from ferrum.placement import status


def get_status() -> dict[str, Any]:
    access.check('baremetal:placement:get_status')
    return status.summary(services.conf(), services.db())
