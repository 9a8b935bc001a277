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
import functools
import random
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.allocation import candidates
from ferrum.common import exception
from ferrum.common import plural
from ferrum.common import states
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj
from ferrum.objects.lease import nodes as lease_nodes

_NODES = node_obj.TABLE
_TRAITS = trait_obj.TABLE
#: The highest node id, as the last entry of the primary key rather than
#: ``max(id)``: before the nodes are analyzed, PostgreSQL computed the
#: aggregate by reading every entry (1.1 ms of a 1.2 ms pick at 10,000
#: nodes) instead of taking the index's last one.
_MAX_ID = sa.select(_NODES.c.id).order_by(
    _NODES.c.id.desc()).limit(1).scalar_subquery()


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
    #: With ``owner``: nodes without an owner count too.
    shared_pool: bool = False

    @classmethod
    def of(cls, lease: lease_obj.Lease, start: datetime.datetime,
           free_now: bool) -> 'Ask':
        return cls(lease.resource_class, lease.traits or [],
                   lease.candidate_nodes, lease.owner, start,
                   lease.block_end, free_now, lease.shared_pool)


def free_now_clause() -> sa.ColumnElement[bool]:
    """Nodes nobody uses now: available, without instance or lock."""
    return sa.and_(_NODES.c.provision_state == states.AVAILABLE,
                   _NODES.c.instance_uuid.is_(None),
                   _NODES.c.allocation_id.is_(None),
                   _NODES.c.reservation.is_(None))


@dataclasses.dataclass(frozen=True)
class _Shape:
    resource_class: bool
    candidates: bool
    owner: bool
    traits: int
    free_now: bool
    exclude: bool
    shared_pool: bool = False


@dataclasses.dataclass(frozen=True)
class _Statements:
    filters: tuple[candidates.Filter, ...]
    from_pivot: sa.Select[Any]
    before_pivot: sa.Select[Any]
    explain: sa.Select[Any]
    #: Per node of ``b_ids``: 1 or 0 for each filter but the window's.
    fits: sa.Select[Any]


def _bind(name: str, **kwargs: Any) -> Any:
    return sa.bindparam(name, **kwargs)


@functools.lru_cache(maxsize=128)
def _statements(shape: _Shape) -> _Statements:
    """The filters and queries of one shape of ask, built once: building
    a statement costs more than running it on SQLite."""
    found: list[candidates.Filter] = []
    if shape.resource_class:
        found.append(candidates.Filter(
            _NODES.c.resource_class == _bind('b_rc'),
            'have resource class "%(rc)s"', 'with another resource class'))
    if shape.candidates:
        found.append(candidates.Filter(
            _NODES.c.uuid.in_(_bind('b_uuids', expanding=True)),
            'are among the %(candidates)s',
            'not among the candidate nodes'))
    if shape.owner and shape.shared_pool:
        found.append(candidates.Filter(
            sa.or_(_NODES.c.owner == _bind('b_owner'),
                   _NODES.c.owner.is_(None)),
            'have owner "%(owner)s" or none', 'with another owner'))
    elif shape.owner:
        found.append(candidates.Filter(
            _NODES.c.owner == _bind('b_owner'), 'have owner "%(owner)s"',
            'with another owner'))
    found.append(candidates.Filter(
        sa.and_(_NODES.c.maintenance.is_(False), _NODES.c.retired.is_(False)),
        'are not in maintenance or retired', 'in maintenance or retired'))
    for index in range(shape.traits):
        found.append(candidates.Filter(
            sa.select(_TRAITS.c.node_id).where(
                _TRAITS.c.node_id == _NODES.c.id,
                _TRAITS.c.trait == _bind('b_trait_%d' % index)
            ).offset(0).exists(),
            'have trait %%(trait_%d)s' % index,
            'without trait %%(trait_%d)s' % index))
    if shape.free_now:
        found.append(candidates.Filter(
            free_now_clause(), 'are free now',
            'in use now (deployed, allocated, busy or not available)'))
    found.append(candidates.Filter(
        ~lease_nodes.held_clause(_bind('b_start', type_=sa.DateTime),
                               _bind('b_block_end', type_=sa.DateTime)),
        'are free over the window', 'booked by other leases over the window '
        '(cleaning margin included)'))
    clauses = [f.clause for f in found]
    if shape.exclude:
        clauses.append(_NODES.c.id.not_in(_bind('b_exclude', expanding=True)))
    query = sa.select(_NODES.c.id, _NODES.c.uuid).where(*clauses).order_by(
        _NODES.c.id).limit(_bind('b_limit'))
    # A random fraction of the highest id, inside the query (as the
    # allocation sample does): one round trip less than asking for it.
    pivot = sa.cast(_bind('b_fraction', type_=sa.Float) * _MAX_ID,
                    sa.Integer)
    fits = sa.select(_NODES.c.id, *(
        sa.case((f.clause, 1), else_=0) for f in found[:-1])).where(
            _NODES.c.id.in_(_bind('b_ids', expanding=True)))
    return _Statements(tuple(found), query.where(_NODES.c.id >= pivot),
                       query.where(_NODES.c.id < pivot),
                       candidates.count_statement(found), fits)


def _prepare(ask: Ask, exclude: Sequence[int] = ()
             ) -> tuple[_Statements, dict[str, Any], dict[str, Any]]:
    """(statements, bound values, words for the explanation) of ``ask``."""
    traits = sorted(set(ask.traits))
    shape = _Shape(ask.resource_class is not None,
                   ask.candidate_nodes is not None, ask.owner is not None,
                   len(traits), ask.free_now, bool(exclude),
                   ask.shared_pool and ask.owner is not None)
    params: dict[str, Any] = {
        'b_rc': ask.resource_class, 'b_owner': ask.owner,
        'b_start': ask.start, 'b_block_end': ask.block_end,
        'b_uuids': base.bucketed(list(ask.candidate_nodes or ())),
        'b_exclude': base.bucketed(sorted(exclude))}
    words: dict[str, Any] = {'rc': ask.resource_class,
                             'candidates': plural.count(
                                 len(ask.candidate_nodes or ()),
                                 'candidate node'),
                             'owner': ask.owner}
    for index, trait in enumerate(traits):
        params['b_trait_%d' % index] = words['trait_%d' % index] = trait
    return _statements(shape), params, words


def pick(conn: sa.Connection, ask: Ask, count: int,
         exclude: Sequence[int] = (),
         rng: random.Random | None = None) -> list[tuple[int, str]]:
    """(id, uuid) of ``count`` matching nodes, or fewer if there are not
    enough."""
    rng = rng or random.Random()
    statements, params, _words = _prepare(ask, exclude)
    params.update(b_fraction=rng.random(), b_limit=count)
    found = [(row.id, row.uuid) for row in conn.execute(
        statements.from_pivot, params)]
    if len(found) < count:
        params['b_limit'] = count - len(found)
        found += [(row.id, row.uuid) for row in conn.execute(
            statements.before_pivot, params)]
    return found


def explain(conn: sa.Connection, ask: Ask) -> str:
    """How many nodes each filter kept, in words."""
    statements, params, words = _prepare(ask)
    row = conn.execute(statements.explain, params).one()
    return candidates.describe(row, statements.filters, words)


def misfits(conn: sa.Connection, ask: Ask, node_ids: Sequence[int]
            ) -> dict[int, list[str]]:
    """Which of ``node_ids`` no longer match what ``ask`` asks of the
    nodes themselves (the window aside: they are the lease's own), and
    why: node id -> the words of each filter it fails now, or
    ``['deleted']`` for a node that is gone. Matching nodes are left out.

    A lease's nodes matched when it was booked; by its start one may have
    gone into maintenance, been retired, or been given another resource
    class, owner or traits. One query, with the filters the pick uses.
    """
    if not node_ids:
        return {}
    statements, params, words = _prepare(
        dataclasses.replace(ask, free_now=False))
    params['b_ids'] = base.bucketed(sorted(set(node_ids)))
    filters = statements.filters[:-1]
    found: dict[int, list[str]] = {node_id: ['deleted']
                                   for node_id in node_ids}
    for node_id, *passed in conn.execute(statements.fits, params):
        found[node_id] = [f.removed % words
                          for f, ok in zip(filters, passed, strict=True)
                          if not ok]
    return {node_id: why for node_id, why in found.items() if why}


def pick_all(conn: sa.Connection, ask: Ask, count: int
             ) -> list[tuple[int, str]]:
    """``count`` nodes, or LeaseConflict (409) saying what matched."""
    found = pick(conn, ask, count)
    if len(found) < count:
        raise exception.LeaseConflict(reason=(
            'Not enough nodes for this lease: %d wanted, %d found from %s to '
            '%s. %s.' % (count, len(found), ask.start.isoformat(),
                         ask.block_end.isoformat(), explain(conn, ask))))
    return found
