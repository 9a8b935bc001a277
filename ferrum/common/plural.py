# SPDX-License-Identifier: Apache-2.0
"""A count and its noun, agreeing: "1 node", "3 nodes", "1 node is back".

Every message that puts a number before a noun says it through
:func:`count`, so that a lease of one node does not log "its 1 nodes are
back". English only, as every message of ferrum is.
"""


def count(number: int, one: str, many: str | None = None) -> str:
    """``number`` and the phrase that agrees with it.

    :param one: the phrase after 1 (``'node'``, ``'node is'``).
    :param many: the phrase after any other number; ``one`` + ``'s'``
        when not given, which suits a lone regular noun only.
    """
    if number == 1:
        return '1 %s' % one
    return '%d %s' % (number, many if many is not None else one + 's')
