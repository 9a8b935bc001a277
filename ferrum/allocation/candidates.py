# SPDX-License-Identifier: Apache-2.0
"""Which nodes an allocation may take, as SQL filters that explain misses.

Each :class:`Filter` is one requirement of the allocation spec (resource
class, candidate list, owner, available, not in maintenance, power state
known, no instance, each requested trait) written as a SQL clause, with the
words that describe the nodes it removes. The same list serves three
purposes:

* :func:`sample` fetches a bounded random sample of matching nodes, so an
  allocation costs the same with a thousand nodes or a hundred thousand;
* :meth:`ferrum.objects.allocation.Allocation.claim` repeats the clauses in
  its conditional UPDATE, which is the re-check at the moment of taking;
* :func:`explain` counts, in one query, how many nodes each filter removed,
  so a failed allocation says why, as metalsmith's filters do: "no node
  matches: 3 nodes have resource class gold; of them 1 is not available
  (...), 2 lack trait CUSTOM_GPU".

The trait test is a superset test in SQL: one ``EXISTS`` per requested
trait, each answered by the ``node_traits`` primary key.
"""

import dataclasses
import random
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ferrum.common import states
from ferrum.objects import allocation as allocation_obj
from ferrum.objects import node as node_obj
from ferrum.objects import trait as trait_obj

_NODES = node_obj.TABLE
_TRAITS = trait_obj.TABLE


@dataclasses.dataclass(frozen=True)
class Filter:
    """One requirement, and how to describe the nodes that fail it."""

    clause: sa.ColumnElement[bool]
    #: Completes "N nodes ...": the nodes this filter keeps.
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


def filters_for(allocation: allocation_obj.Allocation,
                candidate_uuids: Sequence[str] | None = None
                ) -> list[Filter]:
    """The requirements of ``allocation``, most selective first.

    :param candidate_uuids: overrides the allocation's candidate list.
    """
    result = [Filter(_NODES.c.resource_class == allocation.resource_class,
                     'have resource class "%s"' % allocation.resource_class,
                     'with another resource class')]
    uuids = (allocation.candidate_nodes if candidate_uuids is None
             else candidate_uuids)
    if uuids:
        result.append(Filter(_NODES.c.uuid.in_(list(uuids)),
                             'are among the %d candidate nodes' % len(uuids),
                             'not among the candidate nodes'))
    if allocation.owner:
        result.append(Filter(
            sa.or_(_NODES.c.owner == allocation.owner,
                   _NODES.c.lessee == allocation.owner),
            'have owner or lessee "%s"' % allocation.owner,
            'with another owner and lessee'))
    result += [
        Filter(_NODES.c.provision_state == states.AVAILABLE,
               'are available', 'not in provision state "available"'),
        Filter(_NODES.c.maintenance.is_(False),
               'are not in maintenance', 'in maintenance'),
        Filter(_NODES.c.power_state.isnot(None),
               'have a known power state', 'with no known power state'),
        Filter(_NODES.c.instance_uuid.is_(None),
               'are not reserved',
               'already allocated or with an instance_uuid'),
    ]
    for trait in allocation.traits:
        result.append(Filter(
            sa.exists().where(_TRAITS.c.node_id == _NODES.c.id,
                              _TRAITS.c.trait == trait),
            'have trait %s' % trait, 'without trait %s' % trait))
    return result


def clauses(filters: Sequence[Filter]) -> list[sa.ColumnElement[bool]]:
    return [f.clause for f in filters]


_COLUMNS = (_NODES.c.id, _NODES.c.uuid, _NODES.c.name,
            allocation_obj.RAW_INSTANCE_INFO.label('raw_instance_info'))


def sample(conn: sa.Connection, filters: Sequence[Filter], size: int,
           rng: random.Random | None = None) -> list[Candidate]:
    """Up to ``size`` matching nodes, from a random place in the id order.

    The query starts at a random node id and walks the index forward (then
    wraps around), so its cost depends on ``size``, not on the number of
    nodes, and concurrent allocations start in different places and rarely
    race for the same node. The result is shuffled.
    """
    rng = rng or random.Random()
    top = conn.execute(sa.select(sa.func.max(_NODES.c.id))).scalar()
    if top is None:
        return []
    pivot = rng.randint(1, top)
    base = sa.select(*_COLUMNS).where(*clauses(filters)).order_by(
        _NODES.c.id)
    rows = list(conn.execute(base.where(_NODES.c.id >= pivot).limit(size)))
    if len(rows) < size:
        rows += conn.execute(base.where(_NODES.c.id < pivot)
                             .limit(size - len(rows))).all()
    found = [Candidate(row.id, row.uuid, row.name, row.raw_instance_info)
             for row in rows]
    rng.shuffle(found)
    return found


def named(conn: sa.Connection, filters: Sequence[Filter],
          name: str) -> Candidate | None:
    """The matching node called ``name``, if any (API 1.79: tried first)."""
    row = conn.execute(sa.select(*_COLUMNS).where(
        _NODES.c.name == name, *clauses(filters))).first()
    return None if row is None else Candidate(
        row.id, row.uuid, row.name, row.raw_instance_info)


def explain(conn: sa.Connection, filters: Sequence[Filter]) -> str:
    """Why no node matches: how many nodes each filter removed.

    One query: the first filter narrows the scan (it uses the resource
    class index) and a running ``SUM(CASE ...)`` per filter counts the
    nodes that pass it and every filter before it.
    """
    counts: list[Any] = []
    for index in range(1, len(filters)):
        passing = sa.and_(*clauses(filters[1:index + 1]))
        counts.append(sa.func.coalesce(sa.func.sum(
            sa.case((passing, 1), else_=0)), 0))
    query = sa.select(sa.func.count(), *counts).where(filters[0].clause)
    row = conn.execute(query).one()
    total = row[0]
    if total == 0:
        return '0 nodes %s' % filters[0].kept
    parts = ['%d node%s %s' % (total, '' if total == 1 else 's',
                               filters[0].kept)]
    previous = total
    for index, passed in enumerate(row[1:], start=1):
        removed = previous - passed
        if removed:
            parts.append('%d %s' % (removed, filters[index].removed))
        previous = passed
    return '%s; of them %s' % (parts[0], ', '.join(parts[1:])) \
        if len(parts) > 1 else parts[0]
