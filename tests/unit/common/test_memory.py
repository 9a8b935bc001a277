# SPDX-License-Identifier: Apache-2.0
"""The memory policy every ferrum program sets at start-up."""

import ctypes.util

import pytest

from ferrum.common import memory


def test_glibc_takes_the_policy():
    if ctypes.util.find_library('c') is None:
        pytest.skip('no C library to set a policy on')
    # Debian's glibc accepts both settings; a refusal would silently bring
    # back the heap growth tools/bench/hostile_input.py measures.
    assert memory.return_large_buffers() is True
