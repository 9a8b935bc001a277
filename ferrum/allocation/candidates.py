# SPDX-License-Identifier: Apache-2.0
"""Which nodes an allocation may take, as SQL filters that explain misses.

Each :class:`Filter` is one requirement of the allocation spec (resource
class, candidate list, owner, available, not in maintenance, power state
known, no instance, each requested trait) written as a SQL clause, with the
words that describe the nodes it removes. The same filters serve three
purposes:

* :func:`sample` fetches a bounded random sample of matching nodes, so an
  allocation costs the same with a thousand nodes or a hundred thousand;
* the claim (:meth:`ferrum.objects.allocation.Allocation.claim`) repeats
  them in its conditional UPDATE, which is the re-check at the moment of
  taking the node;
* :func:`explain` counts, in one query, how many nodes each filter removed,
  so a failed allocation says why, as metalsmith's filters do: "3 nodes
  have resource class gold; of them 1 not available, 2 without trait
  CUSTOM_GPU".

Nodes that a lease of another project holds, or will hold within
``[lease] guard_time``, are filtered out too (:func:`lease_filter`).

The trait test is a superset test in SQL: one ``EXISTS`` per requested
trait, each answered by the ``node_traits`` primary key (kept a correlated
subquery whatever the planner's statistics say, see :func:`_filters`).

Filters hold bind parameters, not values, and the statements built from
them are built once per *shape* (candidate list or not, owner or not, how
many traits) and reused: building and hashing a statement cost more than
running it on SQLite.
"""

import dataclasses
import datetime
import functools
import json
import random
from collections.abc import Callable, Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.common import plural
from ferrum.common import states
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import base
from ferrum.objects import lease as lease_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

_NODES = node_obj.TABLE
_TRAITS = trait_obj.TABLE
_LEASE_NODES = lease_obj.NODES


@dataclasses.dataclass(frozen=True)
class Filter:
    """One requirement, and how to describe the nodes that fail it.

    The descriptions are ``%``-templates over :attr:`Requirements.words`.
    """

    clause: sa.ColumnElement[bool]
    #: Completes "N nodes ...": the nodes this filter keeps; it starts
    #: with "have" or "are", which :func:`describe` says of one node too.
    kept: str
    #: Completes "N ...": the nodes this filter removes (no verb, so that
    #: it reads right for any N).
    removed: str


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A node worth trying, with what the claim fences on."""

    id: int
    uuid: str
    name: str | None
    raw_instance_info: str | None


@dataclasses.dataclass(frozen=True)
class _Shape:
    candidates: bool
    owner: bool
    traits: int


@dataclasses.dataclass(frozen=True)
class Statements:
    """Everything run for one shape of requirements, built once."""

    filters: tuple[Filter, ...]
    from_pivot: sa.Select[Any]
    before_pivot: sa.Select[Any]
    named: sa.Select[Any]
    claim: sa.Update
    explain: sa.Select[Any]


@dataclasses.dataclass(frozen=True)
class Requirements:
    """What an allocation asks of a node: the statements and their values."""

    statements: Statements
    fixed_params: dict[str, Any]
    #: Values for the filters' descriptions.
    words: dict[str, Any]
    #: [lease] guard_time: nodes whose lease starts sooner are hidden.
    guard_s: float = 0.0
    #: "Now" for the lease guard: the conductor's clock (``ctx.clock``),
    #: so that lease windows and allocations read the same time.
    clock: Callable[[], datetime.datetime] = base.utcnow

    @property
    def params(self) -> dict[str, Any]:
        """The bound values, with the lease guard measured from now: an
        allocation retried for a while must not miss a lease starting
        meanwhile."""
        now = self.clock()
        return dict(self.fixed_params, b_now=now, b_guard_until=now
                    + datetime.timedelta(seconds=self.guard_s))

    @property
    def filters(self) -> tuple[Filter, ...]:
        return self.statements.filters


def requirements_for(allocation: allocation_obj.Allocation,
                     guard_s: float = 0.0,
                     clock: Callable[[], datetime.datetime] = base.utcnow
                     ) -> Requirements:
    """The requirements of ``allocation``, the lease guard measured
    by ``clock``."""
    return requirements(allocation.resource_class, allocation.traits,
                        allocation.candidate_nodes, allocation.owner,
                        guard_s, clock)


def requirements(resource_class: str | None, traits: Sequence[str],
                 candidate_nodes: Sequence[str] | None = None,
                 owner: str | None = None,
                 guard_s: float = 0.0,
                 clock: Callable[[], datetime.datetime] = base.utcnow
                 ) -> Requirements:
    """The requirements of an allocation with these fields.

    :param guard_s: ``[lease] guard_time``; see :func:`lease_filter`.
    :param clock: "now" for the lease guard (the conductor's clock).
    """
    uuids = list(candidate_nodes or [])
    traits = sorted(set(traits))
    shape = _Shape(bool(uuids), bool(owner), len(traits))
    params: dict[str, Any] = {'b_rc': resource_class,
                              'b_available': states.AVAILABLE}
    words: dict[str, Any] = {'rc': resource_class,
                             'candidates': plural.count(
                                 len(uuids), 'candidate node'),
                             'owner': owner}
    if uuids:
        params['b_uuids'] = base.bucketed(uuids)
    if owner:
        params['b_owner'] = owner
    for index, trait in enumerate(traits):
        params['b_trait_%d' % index] = words['trait_%d' % index] = trait
    return Requirements(_statements(shape), params, words, guard_s, clock)


def lease_filter(owner: bool) -> Filter:
    """Nodes no lease of another project holds, or holds within the guard.

    A lease holds its nodes from ``[lease] guard_time`` before its start
    until they are back after its end. Only allocations whose ``owner`` is
    the lease's project may take them (the node's ``lessee`` then matches
    too, Ironic's 1.60/1.65 rule); an allocation without an owner is
    "another project" for every lease.

    Past its end, a lease still holds a node until its engine gives the
    node back (or hands it to the project's next lease), and then nobody
    may take it, the project included: that end would release or undeploy
    whatever was made on the node meanwhile.
    """
    held = sa.select(_LEASE_NODES.c.id).where(
        _LEASE_NODES.c.node_id == _NODES.c.id, _LEASE_NODES.c.holding,
        # <=: a window is [start, end), so a lease starting at the very
        # instant of "now + guard" already holds its nodes.
        _LEASE_NODES.c.start_at <= sa.bindparam('b_guard_until',
                                                type_=sa.DateTime))
    if owner:
        held = held.where(sa.or_(
            _LEASE_NODES.c.project != sa.bindparam('b_owner'),
            _LEASE_NODES.c.end_at <= sa.bindparam('b_now',
                                                  type_=sa.DateTime)))
    return Filter(~held.offset(0).exists(),
                  'are not leased to another project',
                  'leased, or about to be, to another project')


def _filters(shape: _Shape) -> tuple[Filter, ...]:
    """The filters of a shape, most selective first."""
    result = [Filter(_NODES.c.resource_class == sa.bindparam('b_rc'),
                     'have resource class "%(rc)s"',
                     'with another resource class')]
    if shape.candidates:
        result.append(Filter(
            _NODES.c.uuid.in_(sa.bindparam('b_uuids', expanding=True)),
            'are among the %(candidates)s',
            'not among the candidate nodes'))
    if shape.owner:
        result.append(Filter(
            sa.or_(_NODES.c.owner == sa.bindparam('b_owner'),
                   _NODES.c.lessee == sa.bindparam('b_owner')),
            'have owner or lessee "%(owner)s"',
            'with another owner and lessee'))
    result += [
        lease_filter(shape.owner),
        Filter(_NODES.c.provision_state == sa.bindparam('b_available'),
               'are available', 'not in provision state "available"'),
        Filter(_NODES.c.maintenance.is_(False),
               'are not in maintenance', 'in maintenance'),
        Filter(_NODES.c.power_state.isnot(None),
               'have a known power state', 'with no known power state'),
        Filter(_NODES.c.instance_uuid.is_(None), 'are not reserved',
               'already allocated or with an instance_uuid'),
        # As Ironic's candidate query (API 1.83): a part of a machine is
        # not allocated on its own.
        Filter(_NODES.c.parent_node.is_(None), 'are not child nodes',
               'child nodes (with a parent_node)'),
    ]
    for index in range(shape.traits):
        # OFFSET 0 keeps PostgreSQL from turning the EXISTS into a join:
        # right after nodes are enrolled, before autovacuum has analyzed
        # the tables, the planner believes both are tiny and joins every
        # free node with every node holding the trait (50 ms per sample
        # at 1,000 nodes, growing with the square of the fleet). As a
        # correlated subquery it is one primary-key probe per node.
        result.append(Filter(
            sa.select(_TRAITS.c.node_id).where(
                _TRAITS.c.node_id == _NODES.c.id,
                _TRAITS.c.trait == sa.bindparam('b_trait_%d' % index)
            ).offset(0).exists(),
            'have trait %%(trait_%d)s' % index,
            'without trait %%(trait_%d)s' % index))
    return tuple(result)


_MAX_ID = sa.select(sa.func.max(_NODES.c.id)).scalar_subquery()
_COLUMNS = (_NODES.c.id, _NODES.c.uuid, _NODES.c.name,
            allocation_obj.RAW_INSTANCE_INFO.label('raw_instance_info'))


@functools.lru_cache(maxsize=256)
def _statements(shape: _Shape) -> Statements:
    filters = _filters(shape)
    clauses = [f.clause for f in filters]
    ordered = sa.select(*_COLUMNS).where(*clauses).order_by(
        _NODES.c.id).limit(sa.bindparam('b_limit'))
    # The pivot is a random fraction of the highest node id: one indexed
    # lookup inside the query instead of a query of its own.
    # An integer: PostgreSQL would compare float * int as numeric, casting
    # every id and so unable to use the id index.
    pivot = sa.cast(sa.bindparam('b_fraction', type_=sa.Float) * _MAX_ID,
                    sa.Integer)
    return Statements(
        filters=filters,
        from_pivot=ordered.where(_NODES.c.id >= pivot),
        before_pivot=ordered.where(_NODES.c.id < pivot),
        named=sa.select(*_COLUMNS).where(
            _NODES.c.name == sa.bindparam('b_name'), *clauses),
        claim=allocation_obj.take_node_statement(clauses),
        explain=count_statement(filters))


def count_statement(filters: Sequence[Filter]) -> sa.Select[Any]:
    """Counts of the nodes passing each prefix of ``filters``.

    The first filter narrows the scan (it uses the resource class index);
    a running ``SUM(CASE ...)`` per later filter counts the nodes that
    pass it and every filter before it.
    """
    counts: list[Any] = []
    for index in range(1, len(filters)):
        passing = sa.and_(*(f.clause for f in filters[1:index + 1]))
        counts.append(sa.func.coalesce(sa.func.sum(
            sa.case((passing, 1), else_=0)), 0))
    return sa.select(sa.func.count(), *counts).where(filters[0].clause)


def sample(conn: sa.Connection, requirements: Requirements, size: int,
           rng: random.Random | None = None) -> list[Candidate]:
    """Up to ``size`` matching nodes, from a random place in the id order.

    The query starts at a random node id and walks forward (then wraps
    around); with the index on ``instance_uuid`` it reads only free nodes,
    so its cost depends on ``size``, not on the number of nodes, and
    concurrent allocations start in different places and rarely race for
    the same node. The result is shuffled.
    """
    rng = rng or random.Random()
    params = dict(requirements.params, b_fraction=rng.random(), b_limit=size)
    statements = requirements.statements
    rows = list(conn.execute(statements.from_pivot, params))
    if len(rows) < size:
        params['b_limit'] = size - len(rows)
        rows += conn.execute(statements.before_pivot, params).all()
    found = [Candidate(row.id, row.uuid, row.name, row.raw_instance_info)
             for row in rows]
    rng.shuffle(found)
    return found


def ordered(conn: sa.Connection, requirements: Requirements,
            name: str | None, size: int,
            rng: random.Random | None = None) -> list[Candidate]:
    """:func:`sample`, with the matching node called ``name`` first.

    Trying the node named like the allocation first is API 1.79's rule;
    ferrum's conductor applies it whatever the request's version.
    """
    found = sample(conn, requirements, size, rng)
    if not name:
        return found
    row = conn.execute(requirements.statements.named,
                       dict(requirements.params, b_name=name)).first()
    if row is None:
        return found
    return [Candidate(row.id, row.uuid, row.name, row.raw_instance_info)] + [
        c for c in found if c.id != row.id]


def claim_params(requirements: Requirements, candidate: Candidate,
                 allocation: allocation_obj.Allocation) -> dict[str, Any]:
    """Values for :attr:`Statements.claim`: ``allocation`` takes
    ``candidate``."""
    raw = candidate.raw_instance_info
    info = dict(json.loads(raw) if raw else {},
                traits=list(allocation.traits))
    return dict(requirements.params, b_node=candidate.id,
                b_raw_info=raw or '', instance_uuid=allocation.uuid,
                allocation_id=allocation.id, instance_info=info,
                updated_at=base.utcnow())


def explain(conn: sa.Connection, requirements: Requirements) -> str:
    """Why no node matches: how many nodes each filter removed."""
    row = conn.execute(requirements.statements.explain,
                       requirements.params).one()
    return describe(row, requirements.filters, requirements.words)


#: The verbs of :attr:`Filter.kept`, said of one node.
_SINGULAR = {'have': 'has', 'are': 'is'}


def describe(row: Sequence[int], filters: Sequence[Filter],
             words: dict[str, Any]) -> str:
    """The counts of a :func:`count_statement` row, in words."""
    total = row[0]
    kept = filters[0].kept % words
    verb, _, rest = kept.partition(' ')
    parts = [plural.count(total, 'node %s %s' % (
        _SINGULAR.get(verb, verb), rest), 'nodes %s' % kept)]
    previous = total
    for index, passed in enumerate(row[1:], start=1):
        if previous - passed:
            parts.append('%d %s' % (previous - passed,
                                    filters[index].removed % words))
        previous = passed
    if len(parts) == 1:
        return parts[0]
    return '%s; of them %s' % (parts[0], ', '.join(parts[1:]))
