# SPDX-License-Identifier: Apache-2.0
"""Every error ferrum's Placement code raises, as sushy's ``exceptions``.

The first five are the transport's (:mod:`ferrum.placement.client`): an
outage, a refusal, a conflict worth re-reading for, a configuration
Placement cannot be reached with. The rest are the claims' and the
leases' answers built on them. Each says what was wrong; the callers turn
them into the allocation and lease interfaces' own errors (a node's
``last_error``, a lease's ``busy_node_policy``).
"""

from ferrum.common import exception


# The transport.
class PlacementUnavailable(exception.TemporaryFailure):
    msg_fmt = 'Placement is unavailable: %(reason)s'


class PlacementTooOld(PlacementUnavailable):
    """An outage to ferrum: nothing is synced until Placement is upgraded."""

    msg_fmt = ('Placement at %(endpoint)s serves microversions up to '
               '%(found)s; ferrum needs %(needed)s (consumer generations). '
               'Upgrade Placement; until then nothing is synced.')


class PlacementRefused(exception.Conflict):
    msg_fmt = ('Placement refused %(method)s %(url)s with %(status)s '
               '%(error_code)s: %(detail)s')

    status: int
    error_code: str


class PlacementConflict(PlacementRefused):
    """A 409; ``error_code`` is Placement's error code."""

    error_code: str


class ConfigInvalid(exception.Invalid):
    msg_fmt = 'Invalid [placement] configuration: %(reason)s'


# Claims: a lease's, an allocation's, a provider's.
class Busy(Exception):
    """Placement refused a claim: another consumer holds these nodes (or
    they are reserved, or not synced there yet)."""

    def __init__(self, providers: set[str], detail: str) -> None:
        super().__init__(detail)
        self.providers = providers


class ConsumerTaken(Exception):
    """The uuid is already a consumer (of another user, or one ferrum
    expected to create)."""

    def __init__(self, uuid: str, user: str | None = None) -> None:
        super().__init__(uuid)
        self.uuid = uuid
        self.user = user


class ConsumerExists(Exception):
    """The allocation's uuid is already a consumer in Placement."""

    def __init__(self, consumer: str, user: str | None) -> None:
        super().__init__(
            'uuid %s is already a consumer in Placement (user %s), maybe '
            'another service\'s: no node was claimed for it. Create the '
            'allocation with another uuid.' % (consumer, user))


class Clash(Exception):
    """The provider is another service's."""


class ReservedAgain(Exception):
    """The node's provider was reserved again before its claim in use:
    :func:`ferrum.placement.claims.claim_in_use` tries again, and never
    lets it out."""


# A lease's start.
class Undecided(PlacementUnavailable):
    """Placement refused the start without naming a node, and no node
    looks held by another consumer (a provider not synced yet): the
    start is tried again at the next run."""


class Collision(Exception):
    """The lease's uuid is another service's consumer: the start fails
    (the lease cannot have a consumer of its own)."""
