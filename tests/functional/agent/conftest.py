# SPDX-License-Identifier: Apache-2.0
"""The fixtures of the real agent's tests: a ferrum process whose nodes
are agent test machines (tests/functional/agent/nodes.py), and images to
write."""

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent import images as images_mod
from tests.agent import machines
from tests.functional.agent.ferrum_process import Ferrum
from tests.functional.agent.nodes import ferrum_conf

#: The callback timeouts of quick_ferrum: the agent boots from standby in
#: about 2 s and starts its write at once, and these tests run in the
#: serial part (doc/testing.md), on a machine nothing else loads.
QUICK_TIMEOUT = 10


@contextlib.contextmanager
def _running(directory: Any, conf: dict[str, dict[str, str]]
             ) -> Iterator[Ferrum]:
    machines.require_agent_tools()
    running = Ferrum(directory, conf)
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope='module')
def ferrum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ferrum]:
    with _running(tmp_path_factory.mktemp('ferrum-agent'),
                  ferrum_conf()) as running:
        yield running


@pytest.fixture(scope='module')
def quick_ferrum(tmp_path_factory: pytest.TempPathFactory
                 ) -> Iterator[Ferrum]:
    """A ferrum whose callback timeouts are short: for the tests that wait
    for them."""
    timeouts = {'deploy_callback_timeout': str(QUICK_TIMEOUT),
                'clean_callback_timeout': str(QUICK_TIMEOUT)}
    with _running(tmp_path_factory.mktemp('ferrum-quick'),
                  ferrum_conf(conductor=timeouts)) as running:
        yield running


@pytest.fixture(scope='module')
def images(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[images_mod.Images, images_mod.ImageServer]]:
    machines.require_agent_tools()
    folder = str(tmp_path_factory.mktemp('images'))
    made = images_mod.make_images(folder)
    with images_mod.ImageServer(folder) as served:
        yield made, served
