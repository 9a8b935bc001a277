# SPDX-License-Identifier: Apache-2.0
"""Consumers (``/allocations``): read one by one, written in one place.

Every write of ferrum's goes through :meth:`Writer.write`: it reads the
consumers involved, asks the caller what each should hold afterwards (a
function from the consumers as just read to :class:`Holding` s), sends
one ``POST /allocations`` carrying their generations (1.28), and on
``409 placement.concurrent_update`` reads again and rebuilds, within the
one retry budget (:mod:`ferrum.placement.resources.retry`). It then tells
its recorder which providers the write moved the generation of, so that
the sync's recorded generations stay true (see
:func:`ferrum.placement.records.bump_generations`): no caller has to
remember it.

Emptying a consumer is a write like any other (:func:`empty`).

Consumer generations. Placement shows none for a consumer without
allocations, yet one exists at generation 0 after a write it refused with
a 400 (a provider missing: it creates the consumer before it looks the
providers up), and it refuses None for that one ever after ("expected 0
but got None"), while a consumer that does not exist refuses 0. So a
consumer read without a generation is sent None first and, when a
conflict is not explained by another consumer of the write having moved,
0 next (:func:`retry_generations`).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from ferrum.objects import base
from ferrum.placement import client as client_mod
from ferrum.placement.resources import retry

#: Told the providers a write moved the generation of, and when it was
#: sent (``records.bump_generations`` bound to the database).
Recorder = Callable[[set[str], datetime.datetime], None]


@dataclasses.dataclass(frozen=True)
class Consumer:
    """A consumer as read: ``allocations`` is provider uuid -> resource
    class -> amount (empty when it holds nothing or does not exist)."""

    uuid: str
    allocations: Mapping[str, Mapping[str, int]]
    generation: int | None = None
    project: str | None = None
    user: str | None = None

    @property
    def empty(self) -> bool:
        return not self.allocations

    def ours(self, user: str) -> bool:
        """Whether it holds something as ``user``."""
        return not self.empty and self.user == user

    def foreign(self, user: str) -> bool:
        """Whether it holds something as another user than ``user``."""
        return not self.empty and self.user != user


class Holding(NamedTuple):
    """What a consumer should hold after a write (nothing: emptied)."""

    allocations: Mapping[str, Mapping[str, int]]
    project: str
    user: str


class Written(NamedTuple):
    """A write done: the consumers as last read, and what was sent (empty
    when the caller found nothing to write)."""

    read: Mapping[str, Consumer]
    written: Mapping[str, Holding]


#: The caller's part of a write: the consumers as just read -> what those
#: to write should hold. It may raise to stop the write (nothing sent).
Build = Callable[[Mapping[str, Consumer]], Mapping[str, Holding]]


def read(client: client_mod.PlacementClient, uuid: str) -> Consumer:
    """``GET /allocations/{uuid}`` (a missing consumer reads as empty)."""
    body: dict[str, Any] = client.get('/allocations/%s' % uuid)
    return Consumer(uuid, {
        provider: dict(found['resources'])
        for provider, found in (body.get('allocations') or {}).items()},
        body.get('consumer_generation'), body.get('project_id'),
        body.get('user_id'))


def retry_generations(current: Mapping[str, Consumer],
                      sent: Mapping[str, int | None]
                      ) -> dict[str, int | None]:
    """The generations to send after a conflict, for the consumers as
    read again (``current``); ``sent`` is what the refused write carried.

    A consumer read with a generation is sent it. One read without (empty,
    or absent) was maybe the conflict (see the module docstring): it is
    sent the other of None and 0 than last time, unless another consumer
    of the write moved since it was sent, which explains the conflict.
    """
    moved = any(current[uuid].generation != generation
                for uuid, generation in sent.items()
                if uuid in current and current[uuid].generation is not None)
    found: dict[str, int | None] = {}
    for uuid, consumer in current.items():
        if consumer.generation is not None:
            found[uuid] = consumer.generation
        elif moved:
            found[uuid] = sent.get(uuid)
        else:
            found[uuid] = 0 if sent.get(uuid) is None else None
    return found


def touched(current: Mapping[str, Consumer],
            written: Mapping[str, Holding]) -> set[str]:
    """The providers whose generation a write moved, as far as ferrum
    counts them: those of each consumer's new allocations, or of its
    previous ones when it is emptied. A provider a consumer let go of
    while holding others is not counted: a record behind Placement only
    costs a conflict and a read, one ahead could let a write through
    blind."""
    found: set[str] = set()
    for uuid, holding in written.items():
        found.update(holding.allocations or current[uuid].allocations)
    return found


def body(current: Mapping[str, Consumer], written: Mapping[str, Holding],
         generations: Mapping[str, int | None]) -> dict[str, Any]:
    """The ``POST /allocations`` body of a write."""
    unknown = set(written) - set(current)
    if unknown:
        raise ValueError('a write may only change the consumers it read, '
                         'not %s' % ', '.join(sorted(unknown)))
    return {uuid: {
        'allocations': {provider: {'resources': dict(resources)}
                        for provider, resources
                        in holding.allocations.items()},
        'consumer_generation': generations[uuid],
        'project_id': holding.project, 'user_id': holding.user}
        for uuid, holding in written.items()}


class Writer:
    """The one writer of consumers (thread-safe: it keeps no state
    between writes)."""

    def __init__(self, client: client_mod.PlacementClient,
                 recorder: Recorder, tries: int,
                 now: Callable[[], datetime.datetime] = base.utcnow
                 ) -> None:
        """:param recorder: told the providers each write moved.
        :param tries: of one write (:func:`retry.attempts`)."""
        self.client = client
        self._recorder = recorder
        self._tries = tries
        self._now = now

    def write(self, uuids: Sequence[str], build: Build,
              fresh: Collection[str] = ()) -> Written:
        """Read ``uuids``, let ``build`` say what they should hold, and
        send that in one ``POST /allocations``; again on a generation
        conflict, within the budget.

        :param fresh: consumers presumed new on the first try (not read,
            sent with generation None): a claim of a new uuid costs no
            read unless Placement says it exists.
        :raises PlacementConflict: the consumers kept changing, or another
            409 (a provider without room).
        :raises PlacementRefused: Placement refused the write.
        """
        sent: dict[str, int | None] = {}

        def attempt(number: int) -> Written:
            if number == 1:
                current = {uuid: Consumer(uuid, {}) if uuid in fresh
                           else read(self.client, uuid) for uuid in uuids}
                generations = {uuid: consumer.generation
                               for uuid, consumer in current.items()}
            else:
                current = {uuid: read(self.client, uuid) for uuid in uuids}
                generations = retry_generations(current, sent)
            written = dict(build(current))
            if not written:
                return Written(current, written)
            request = body(current, written, generations)
            sent.clear()
            sent.update((uuid, generations[uuid]) for uuid in written)
            since = self._now()
            self.client.post('/allocations', request)
            self._recorder(touched(current, written), since)
            return Written(current, written)

        # A consumer presumed new and found to exist costs one more try
        # whatever the budget: that re-read is what tells its generation
        # (or that it is taken), not a concurrent change.
        return retry.on_conflict(attempt, self._tries + (1 if fresh else 0))


class Emptied(NamedTuple):
    """What :func:`empty` did: the consumers it emptied, and those it left
    alone because another user's."""

    emptied: list[str]
    foreign: list[str]


def empty(writer: Writer, uuids: Sequence[str],
          user: str | None) -> Emptied:
    """Empty ``uuids`` in one request: those of ``user`` only, or anyone's
    with None (a deleted node's provider, which must go). The one way
    ferrum removes a consumer's allocations.

    :raises PlacementConflict: they kept changing.
    """
    def build(current: Mapping[str, Consumer]) -> dict[str, Holding]:
        return {uuid: Holding({}, consumer.project or '',
                              consumer.user or '')
                for uuid, consumer in current.items()
                if not consumer.empty
                and (user is None or consumer.user == user)}

    done = writer.write(list(dict.fromkeys(uuids)), build)
    foreign = [] if user is None else [
        uuid for uuid, consumer in done.read.items()
        if consumer.foreign(user)]
    return Emptied(sorted(done.written), foreign)
