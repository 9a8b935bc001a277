# SPDX-License-Identifier: Apache-2.0
"""The real ironic-python-agent in tests: machines, images, a stub API.

* :func:`machine` (:mod:`tests.agent.machines`): a loop-device machine the
  ``agent-test`` power interface boots, torn down whatever happens;
  :func:`require_agent_tools` skips (fails under FERRUM_REQUIRE_REAL=1)
  without the agent's environment.
* :func:`make_images`, :class:`ImageServer` (:mod:`tests.agent.images`).
* :class:`StubIronic` (:mod:`tests.agent.stub_api`): lookup and heartbeat
  for tests of the sandbox without ferrum.

The sandbox itself (three guards: the loop-disk hardware manager, root
device hints, ``/dev/null`` over the host's disks) is in the
``agent_test_driver`` package (tests/agent_driver).
"""

from tests.agent.images import Images
from tests.agent.images import ImageServer
from tests.agent.images import make_images
from tests.agent.images import sha256_file
from tests.agent.machines import IPA_VENV
from tests.agent.machines import Machine
from tests.agent.machines import machine
from tests.agent.machines import require_agent_tools
from tests.agent.stub_api import StubIronic

__all__ = ['IPA_VENV', 'ImageServer', 'Images', 'Machine', 'StubIronic',
           'machine', 'make_images', 'require_agent_tools', 'sha256_file']
