# SPDX-License-Identifier: Apache-2.0
"""Keeping a long-running process's memory flat under large requests.

glibc serves allocations of 128 KiB and more with ``mmap`` and gives them
back when freed, but it raises that threshold (up to 32 MiB) every time
such a block is freed, so that the next large buffers come from the heap.
A server that reads a 1 MiB body, parses it and answers 400 then keeps
each thread's heap grown to its largest request: measured with
``tools/bench/hostile_input.py``, 35 MB of growth over 2,000 hostile
requests. Fixing the threshold at its default keeps large, short-lived
buffers out of the heaps.

glibc also gives threads arenas of their own (up to eight per core), each
keeping its own high-water mark. Under the GIL only one Python thread
allocates at a time, so more arenas buy no parallelism; two keep the
cheroot and conductor threads from each holding a grown heap. Together:
18 MB of growth over 10,000 hostile requests without the arena bound, 14
MB with it, and under 1 MB on a repeat.
"""

import ctypes
import ctypes.util
import logging

LOG = logging.getLogger(__name__)

#: mallopt's parameter numbers (malloc.h).
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
#: glibc's own default: a fixed value switches the adjustment off.
MMAP_THRESHOLD = 128 * 1024
ARENA_MAX = 2


def return_large_buffers() -> bool:
    """Fix glibc's mmap threshold and bound its arenas; False where there
    is no glibc. Call it before the process starts threads."""
    name = ctypes.util.find_library('c')
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False  # not glibc (musl has no mallopt)
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_ARENA_MAX, ARENA_MAX))
    if not ok:
        LOG.debug('mallopt was refused')
    return ok
