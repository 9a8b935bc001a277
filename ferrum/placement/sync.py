# SPDX-License-Identifier: Apache-2.0
"""Pushing one node to its resource provider, writing only what differs.

Placement bumps a provider's generation on every write, even one that
changes nothing, and every bump makes a concurrent claim on the provider
fail; so each push reads the provider first and writes only the parts that
differ (nova learnt the same). Writes carry the generation just read: when
someone else changed the provider meanwhile (409
``placement.concurrent_update``) the push re-reads and tries again, within
the one retry budget (:mod:`ferrum.placement.resources.retry`) with a
random, growing wait. Any other refusal is
recorded against the node (see :mod:`ferrum.placement.records`) and not
retried until the node changes again or the reconcile looks at it.

A provider is changed only when it is ferrum's: it carries
:data:`~ferrum.placement.mapping.MANAGED`, or it is an empty shell with no
traits and no inventory (what a push that died between creating the
provider and marking it leaves). Another service's provider (nova marks
its own ``OWNER_NOVA``) is a clash: reported, never adopted.

:class:`PlacementUnavailable` is not handled here: the worker turns it
into the outage state and keeps the change queued.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

from oslo_config import cfg

from ferrum.common import lease_statuses
from ferrum.conf import allocation as allocation_conf
from ferrum.db import api as db_api
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.objects.lease import holds as lease_holds
from ferrum.placement import client as client_mod
from ferrum.placement import errors
from ferrum.placement import mapping
from ferrum.placement import records
from ferrum.placement import reservations
from ferrum.placement.resources import classes
from ferrum.placement.resources import consumers
from ferrum.placement.resources import providers
from ferrum.placement.resources import retry

LOG = logging.getLogger(__name__)

_NODE_COLUMNS = ['id', *sorted(mapping.COLUMNS)]

#: How far ``POST /reshaper`` moves the generation of a provider whose
#: inventory it replaces with a non-empty one (Placement writes an interim
#: and then the final inventory).
RESHAPE_STEP = 2

#: What one push did, for logs, tests and benchmarks.
UNCHANGED = 'unchanged'
WRITTEN = 'written'
DELETED = 'deleted'
REFUSED = 'refused'



def _holder(held: lease_holds.PlacementHolder | None
            ) -> mapping.Holder | None:
    if held is None:
        return None
    return mapping.Holder(reservations.class_name(held.lease_uuid),
                          held.status == lease_statuses.ENDING)


def check_ours(uuid: str, traits: set[str],
               inventories: dict[str, Any]) -> None:
    """:raises Clash: unless the provider is ferrum's to change."""
    owner = mapping.foreign_owner(traits)
    if owner is not None:
        raise errors.Clash('Resource provider %s is managed by another '
                           'service (it has the trait %s); ferrum leaves it '
                           'alone. '
                           'Delete it from Placement if the node is now '
                           'ferrum\'s alone.' % (uuid, owner))
    if mapping.MANAGED not in traits and (traits or inventories):
        raise errors.Clash('Resource provider %s exists without ferrum\'s '
                           'marker trait %s; ferrum does not adopt a provider '
                           'another service may manage. Delete it from '
                           'Placement, or add %s to it, to let ferrum manage '
                           'it.' % (uuid, mapping.MANAGED, mapping.MANAGED))


class Pusher:
    """Pushes nodes to Placement through one client (thread-safe), and
    holds the one writer of consumers (:attr:`writer`), which keeps this
    database's recorded generations true.

    :ivar claims_allocations: whether allocations are consumers in
        Placement (``[allocation] backend = placement``), decided once
        here: their nodes' providers follow :func:`mapping.reserved`'s
        rule for it, and the audits look at their consumers.
    """

    def __init__(self, conf: cfg.ConfigOpts, db: db_api.Database,
                 client: client_mod.PlacementClient,
                 sleep: Callable[[float], None] = time.sleep,
                 claims_allocations: bool | None = None) -> None:
        """:param claims_allocations: None reads ``[allocation]
            backend``."""
        self.conf = conf
        self.db = db
        self.client = client
        self._sleep = sleep
        self.writer = consumers.Writer(
            client, functools.partial(records.bump_generations, db),
            retry.attempts(conf))
        # Custom classes and traits known to exist: created once per process
        # (PUT is idempotent, so a race between threads is harmless).
        self._known_classes: set[str] = set()
        self._known_traits: set[str] = set()
        self.claims_allocations = (
            allocation_conf.through_placement(conf)
            if claims_allocations is None else claims_allocations)

    def desired(self, node_uuid: str) -> mapping.Provider | None:
        """The provider ``node_uuid`` should have; None when the node is
        gone."""
        return self.desired_many([node_uuid]).get(node_uuid)

    def desired_many(self, node_uuids: Sequence[str] | None
                     ) -> dict[str, mapping.Provider]:
        """The providers of these nodes (of every node with None), in two
        queries; a node that is gone has none."""
        filters = None if node_uuids is None else {'uuid_in': node_uuids}
        with self.db.reader() as conn:
            rows = node_obj.Node.list_columns(self.db, _NODE_COLUMNS,
                                              filters)
            ids = [row.id for row in rows]
            traits = trait_obj.get_for_nodes(self.db, ids)
            holders = lease_holds.placement_holders(
                conn, None if node_uuids is None else ids)
        return {row.uuid: mapping.provider_of(
            dict(row._mapping), traits[row.id], self.claims_allocations,
            _holder(holders.get(row.id))) for row in rows}

    def push(self, node_uuid: str, verify: bool = False,
             delete: bool = True) -> str:
        """Bring the provider of ``node_uuid`` in line with the node.

        Trusts ferrum's record of its last write unless ``verify``: a node
        whose wanted provider is the one recorded costs no request, and one
        whose inventory alone changed costs one PUT with the recorded
        generation (a write by anyone else since then makes it a 409, and
        the push falls back to reading the provider). Drift that someone
        else caused is found by the reconcile, which clears the record's
        generation, and by the audit, which verifies.

        :raises PlacementUnavailable: Placement is down or refusing us.
        """
        def attempt(number: int) -> str:
            wanted = self.desired(node_uuid)
            if wanted is None:
                # The outbox deletes a gone node's provider; a push before
                # a consumer's release must not (it still has the
                # consumer).
                return self._delete(node_uuid) if delete else UNCHANGED
            if not verify and number == 1:
                trusted = self._from_record(wanted)
                if trusted is not None:
                    return trusted
            return self._apply(wanted)

        try:
            return retry.on_conflict(
                attempt, retry.attempts(self.conf),
                pause=lambda number: self._sleep(
                    random.uniform(0, 0.1 * number)))
        except errors.Clash as exc:
            records.save_problem(self.db, node_uuid, records.CLASH, str(exc))
        except errors.PlacementRefused as exc:
            # A conflict still there after the retries, or a refusal
            # reading again does not fix.
            records.save_problem(self.db, node_uuid, records.CONFLICT,
                                 str(exc))
        return REFUSED

    def push_batch(self, node_uuids: Sequence[str]
                   ) -> tuple[dict[str, str], list[str]]:
        """Push what ferrum's records settle without reading providers, in
        as few requests as possible; returns the outcomes by node and the
        nodes left for :meth:`push`, one at a time.

        A node whose wanted provider is the recorded one costs nothing
        (as in :meth:`push`). Nodes whose inventory alone changed (same
        class and traits as recorded, a trusted generation) go together in
        one ``POST /reshaper`` when Placement serves it: one request and
        one transaction in Placement instead of one PUT each, which is what
        lets a single Placement worker keep up with a hundred changes a
        second. Everything else (a new, deleted or drifted node, changed
        traits or class, a recorded problem) is left to :meth:`push`, and
        so is the whole batch when the reshaper fails: a generation
        conflict on any provider fails all of them, and :meth:`push` then
        finds which, re-reading only those.

        :raises PlacementUnavailable: Placement is down or refusing us.
        """
        wanted = self.desired_many(node_uuids)
        known = records.get_many(self.db, node_uuids)
        outcomes: dict[str, str] = {}
        batch: list[tuple[mapping.Provider, int]] = []
        rest: list[str] = []
        for uuid in node_uuids:
            provider, record = wanted.get(uuid), known.get(uuid)
            if (provider is None or record is None
                    or record.state != records.SYNCED
                    or record.generation is None):
                rest.append(uuid)
            elif record.matches(provider):
                outcomes[uuid] = UNCHANGED
            elif (provider.resource_class is not None
                  and record.resource_class == provider.resource_class
                  and record.traits == provider.traits):
                batch.append((provider, record.generation))
            else:
                rest.append(uuid)
        # One change alone is one PUT either way.
        if len(batch) > 1 and self.client.can_reshape() and self._reshape(
                batch):
            outcomes.update((provider.uuid, WRITTEN) for provider, _ in batch)
        else:
            rest.extend(provider.uuid for provider, _ in batch)
        return outcomes, rest

    def _reshape(self, batch: list[tuple[mapping.Provider, int]]) -> bool:
        """One ``POST /reshaper`` for ``batch``; False when it failed (the
        caller pushes those nodes one by one).

        A 5xx is not taken for an outage here: a Placement whose reshaper
        alone fails must not stop the sync. The pushes one by one that
        follow find out whether Placement is really away.
        """
        try:
            providers.reshape(self.client, {
                provider.uuid: (provider.inventories, generation)
                for provider, generation in batch})
        except errors.PlacementUnavailable:
            return False
        except errors.PlacementRefused as exc:
            if exc.status == 403 and self.client.reshaper_refused is None:
                self.client.reshaper_refused = str(exc)
                LOG.warning('Placement does not let ferrum change many '
                            'providers in one request (POST /reshaper '
                            'needs the service role): pushing them one at '
                            'a time. %s', exc)
            return False
        # Placement answers without the new generations. A reshape writes
        # each provider's (non-empty) inventory twice, an interim and a
        # final one, so each generation moved by RESHAPE_STEP; one
        # read-back confirms it. Any other step means someone else wrote
        # the read-back provider meanwhile, and then the others could be
        # recorded a generation too high, which would hide a later write
        # of theirs from the reconcile and let a trusted PUT go through
        # blind: the whole batch is recorded without a generation instead,
        # so each node's next push reads its provider first.
        first, sent = batch[0]
        current = providers.generation(self.client, first.uuid)
        step = current - sent if current is not None else 0
        trusted = step == RESHAPE_STEP
        records.save_synced_many(self.db, [
            (provider, generation + RESHAPE_STEP if trusted else None)
            for provider, generation in batch])
        return True

    # ---- writing ----------------------------------------------------------

    def _from_record(self, wanted: mapping.Provider) -> str | None:
        """The push when ferrum's record says enough; None to read first."""
        record = records.get(self.db, wanted.uuid)
        if (record is None or record.state != records.SYNCED
                or record.generation is None):
            return None
        if record.matches(wanted):
            return UNCHANGED
        if record.traits != wanted.traits:
            return None
        if wanted.resource_class is not None:
            self._ensure_class(wanted.resource_class)
        try:
            generation = providers.put_inventories(
                self.client, wanted.uuid, wanted.inventories,
                record.generation)
        except errors.PlacementConflict as exc:
            if exc.error_code in (client_mod.CONCURRENT_UPDATE,
                                  client_mod.INVENTORY_IN_USE):
                return None
            raise
        records.save_synced(self.db, wanted, generation)
        return WRITTEN

    def _apply(self, wanted: mapping.Provider) -> str:
        uuid = wanted.uuid
        current = providers.read(self.client, uuid)
        wrote = False
        if current is None:
            generation = providers.create(self.client, uuid)
            inventories: dict[str, Any] = {}
            traits: set[str] = set()
            wrote = True
        else:
            generation, inventories, traits = current
            check_ours(uuid, traits, inventories)
        record = records.get(self.db, uuid)
        owned = record.traits if record is not None else frozenset()
        foreign = traits - owned - {mapping.MANAGED}
        wanted_traits = foreign | wanted.traits
        if wanted_traits != traits:
            self._ensure_traits(wanted.traits)
            records.save_owned_traits(
                self.db, uuid, owned | wanted.traits,
                record.state if record is not None else records.SYNCED)
            generation = providers.put_traits(self.client, uuid,
                                              wanted_traits, generation)
            wrote = True
        if not mapping.same_inventories(inventories, wanted.inventories):
            if wanted.resource_class is not None:
                self._ensure_class(wanted.resource_class)
            if wanted.reservation is not None:
                self._ensure_class(wanted.reservation)
            try:
                generation = providers.put_inventories(
                    self.client, uuid, wanted.inventories, generation)
            except errors.PlacementConflict as exc:
                if exc.error_code != client_mod.INVENTORY_IN_USE:
                    raise
                return self._keep_held(wanted, inventories, generation, exc)
            wrote = True
        records.save_synced(self.db, wanted, generation)
        return WRITTEN if wrote else UNCHANGED

    def _keep_held(self, wanted: mapping.Provider,
                   current: dict[str, Any], generation: int,
                   exc: errors.PlacementConflict) -> str:
        """Write ``wanted`` but keep, reserved, the reservation units a
        consumer still holds: a consumer that claimed through an ended
        lease's class (another service's; ferrum's own are released at
        the end) is never dropped, and the node's own class must still be
        written. Recorded as a problem, so the reconcile tries again until
        that consumer is gone (the lease's class waits for it too)."""
        kept = dict(wanted.inventories)
        held = sorted(rc for rc in current if rc not in kept
                      and reservations.lease_of(rc) is not None)
        if not held:
            raise exc
        for rc in held:
            kept[rc] = dict(current[rc], reserved=current[rc]['total'])
        providers.put_inventories(self.client, wanted.uuid, kept, generation)
        records.save_problem(
            self.db, wanted.uuid, records.CONFLICT,
            'Placement still has consumers of %s on this provider (another '
            'service claimed through an ended lease\'s reservation class): '
            'kept, reserved, until they are released. %s'
            % (', '.join(held), exc))
        return WRITTEN

    def unreserve(self, node_uuid: str) -> None:
        """Write the provider of ``node_uuid`` with ``reserved`` 0 whatever
        the rule says, for the claim of a node in use that follows at
        once (:func:`ferrum.placement.claims.claim_in_use`); the next
        push writes the rule's value back.

        :raises PlacementUnavailable: Placement is away.
        :raises PlacementConflict: the provider kept changing.
        :raises Clash: the provider is another service's.
        """
        wanted = self.desired(node_uuid)
        if wanted is None:
            return
        self._apply(wanted.unreserved())

    def _delete(self, uuid: str) -> str:
        """The node is gone from the database: delete its provider if ours."""
        traits = providers.traits(self.client, uuid)
        if traits is not None and mapping.MANAGED in traits:
            try:
                providers.delete(self.client, uuid)
            except errors.PlacementConflict as exc:
                if exc.error_code != client_mod.PROVIDER_IN_USE:
                    raise
                # Still held: the consumer of an allocation deleted with
                # the node, whose release is on its way, or a claim by
                # another service on a node that no longer exists. Both
                # go with the provider, as in nova's cascade delete.
                consumers.empty(self.writer, sorted(
                    providers.consumers_of(self.client, uuid)), None)
                providers.delete(self.client, uuid)
            records.forget(self.db, uuid)
            return DELETED
        records.forget(self.db, uuid)
        return UNCHANGED

    def _ensure_class(self, name: str) -> None:
        if name not in self._known_classes:
            classes.ensure(self.client, name)
            self._known_classes.add(name)

    def _ensure_traits(self, names: frozenset[str]) -> None:
        for name in sorted(names - self._known_traits):
            if name.startswith('CUSTOM_'):
                classes.ensure_trait(self.client, name)
            self._known_traits.add(name)
