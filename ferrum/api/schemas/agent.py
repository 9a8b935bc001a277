# SPDX-License-Identifier: Apache-2.0
"""The body of ``POST /v1/heartbeat/{node}``, as Ironic's (API 1.22+).

``agent_version`` exists from 1.36, ``agent_token`` from 1.62 (required:
the conductor refuses a heartbeat without the node's token) and
``agent_verify_ca`` from 1.68; ferrum takes ``agent_status`` and
``agent_status_message`` (1.72, fast track) without using them (see
doc/api-versions.md).
"""

from typing import Any

HEARTBEAT: dict[str, Any] = {
    'type': 'object',
    'properties': {
        'callback_url': {'type': 'string', 'minLength': 1,
                         'maxLength': 2048},
        'agent_version': {'type': 'string', 'maxLength': 255},
        'agent_token': {'type': 'string', 'maxLength': 255},
        # A PEM certificate (or a boolean, which Ironic accepts too).
        'agent_verify_ca': {'type': ['string', 'boolean'],
                            'maxLength': 65536},
        'agent_status': {'type': 'string', 'maxLength': 32},
        'agent_status_message': {'type': 'string', 'maxLength': 1024},
    },
    'required': ['callback_url'],
    'additionalProperties': False,
}
