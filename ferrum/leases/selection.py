# SPDX-License-Identifier: Apache-2.0
"""Which nodes a lease may hold: SQL filters that explain a refusal.

A lease asks for ``count`` nodes of a resource class (or among candidate
nodes), with traits, optionally owned by ``owner``, over its window. The
filters are :class:`ferrum.allocation.candidates.Filter` s, so a lease
that cannot be satisfied is refused the way an allocation is: "40 nodes
have resource class gold; of them 2 in maintenance or retired, 30 booked
by other leases over the window". The last filter is the overlap test the
database re-checks (see :mod:`ferrum.objects.lease`).

Nodes are taken from a random place in the id order, as allocations'
samples are, so concurrent creators rarely reach for the same nodes.
"""

import dataclasses
import datetime
import random
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.allocation import candidates
from ferrum.common import exception
from ferrum.common import states
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

_NODES = node_obj.TABLE
_TRAITS = trait_obj.TABLE


@dataclasses.dataclass(frozen=True)
class Ask:
    """What a lease asks of its nodes, over [start, block_end)."""

    resource_class: str | None
    traits: Sequence[str]
    candidate_nodes: Sequence[str] | None
    owner: str | None
    start: datetime.datetime
    block_end: datetime.datetime
    #: The nodes must be free now (the lease starts within the guard time).
    free_now: bool

    @classmethod
    def of(cls, lease: lease_obj.Lease, start: datetime.datetime,
           free_now: bool) -> 'Ask':
        return cls(lease.resource_class, lease.traits or [],
                   lease.candidate_nodes, lease.owner, start,
                   lease.block_end, free_now)


def free_now_clause() -> sa.ColumnElement[bool]:
    """Nodes nobody uses now: available, without instance or lock."""
    return sa.and_(_NODES.c.provision_state == states.AVAILABLE,
                   _NODES.c.instance_uuid.is_(None),
                   _NODES.c.allocation_id.is_(None),
                   _NODES.c.reservation.is_(None))


def _filters(ask: Ask) -> tuple[list[candidates.Filter], dict[str, Any]]:
    words: dict[str, Any] = {'rc': ask.resource_class,
                             'candidates': len(ask.candidate_nodes or ()),
                             'owner': ask.owner}
    found: list[candidates.Filter] = []
    if ask.resource_class is not None:
        found.append(candidates.Filter(
            _NODES.c.resource_class == ask.resource_class,
            'have resource class "%(rc)s"', 'with another resource class'))
    if ask.candidate_nodes is not None:
        found.append(candidates.Filter(
            _NODES.c.uuid.in_(base.bucketed(list(ask.candidate_nodes))),
            'are among the %(candidates)d candidate nodes',
            'not among the candidate nodes'))
    if ask.owner is not None:
        found.append(candidates.Filter(
            _NODES.c.owner == ask.owner, 'have owner "%(owner)s"',
            'with another owner'))
    found.append(candidates.Filter(
        sa.and_(_NODES.c.maintenance.is_(False), _NODES.c.retired.is_(False)),
        'are not in maintenance or retired', 'in maintenance or retired'))
    for index, trait in enumerate(sorted(set(ask.traits))):
        words['trait_%d' % index] = trait
        found.append(candidates.Filter(
            sa.select(_TRAITS.c.node_id).where(
                _TRAITS.c.node_id == _NODES.c.id, _TRAITS.c.trait == trait
            ).offset(0).exists(),
            'have trait %%(trait_%d)s' % index,
            'without trait %%(trait_%d)s' % index))
    if ask.free_now:
        found.append(candidates.Filter(
            free_now_clause(), 'are free now',
            'in use now (deployed, allocated, busy or not available)'))
    found.append(candidates.Filter(
        ~lease_obj.held_clause(ask.start, ask.block_end),
        'are free over the window', 'booked by other leases over the window '
        '(cleaning margin included)'))
    return found, words


def pick(conn: sa.Connection, ask: Ask, count: int,
         exclude: Sequence[int] = (),
         rng: random.Random | None = None) -> list[int]:
    """Ids of ``count`` matching nodes, or fewer if there are not enough."""
    rng = rng or random.Random()
    filters, _words = _filters(ask)
    clauses = [f.clause for f in filters]
    if exclude:
        clauses.append(_NODES.c.id.not_in(base.bucketed(sorted(exclude))))
    max_id = conn.execute(sa.select(sa.func.max(_NODES.c.id))).scalar() or 0
    pivot = int(rng.random() * max_id)
    query = sa.select(_NODES.c.id).where(*clauses).order_by(_NODES.c.id)
    found = list(conn.execute(query.where(_NODES.c.id >= pivot).limit(count))
                 .scalars())
    if len(found) < count:
        found += conn.execute(query.where(_NODES.c.id < pivot).limit(
            count - len(found))).scalars()
    return found


def explain(conn: sa.Connection, ask: Ask) -> str:
    """How many nodes each filter kept, in words."""
    filters, words = _filters(ask)
    row = conn.execute(candidates.count_statement(filters)).one()
    return candidates.describe(row, filters, words)


def pick_all(conn: sa.Connection, ask: Ask, count: int) -> list[int]:
    """``count`` nodes, or LeaseConflict (409) saying what matched."""
    found = pick(conn, ask, count)
    if len(found) < count:
        raise exception.LeaseConflict(reason=(
            'Not enough nodes for this lease: %d wanted, %d found from %s to '
            '%s. %s.' % (count, len(found), ask.start.isoformat(),
                         ask.block_end.isoformat(), explain(conn, ask))))
    return found
