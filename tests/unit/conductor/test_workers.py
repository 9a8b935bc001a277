# SPDX-License-Identifier: Apache-2.0
"""The worker pool's seam for a full pool: ``occupied()``."""

import threading

import pytest

from ferrum.common import exception
from ferrum.conductor import workers


def test_occupied_holds_every_free_worker_until_the_block_ends():
    pool = workers.WorkerPool(2)
    release = threading.Event()
    pool.submit(release.wait)
    try:
        with pool.occupied() as held:
            # The busy worker stays busy; the free one is held.
            assert held == 1
            with pytest.raises(exception.NoFreeConductorWorker):
                pool.submit(lambda: None)
        done = threading.Event()
        pool.submit(done.set)
        assert done.wait(30)
    finally:
        release.set()
        assert pool.wait_idle(30)
        pool.shutdown()
