# SPDX-License-Identifier: Apache-2.0
"""8 threads book leases through the API at once; no node is ever booked
twice, as an independent query over every pair of windows shows."""

import concurrent.futures
import datetime
import random

import sqlalchemy as sa

from tests.functional.leases.sites import iso

THREADS = 8
PER_THREAD = 12
MARGIN = 300


def _book(site, seed):
    rng = random.Random(seed)
    client = site.client.application.test_client()
    codes = []
    for _ in range(PER_THREAD):
        start = site.clock() + datetime.timedelta(
            minutes=rng.randrange(10, 600))
        end = start + datetime.timedelta(minutes=rng.randrange(30, 180))
        resp = client.post('/v1/leases', json={
            'project': 'p%d' % seed, 'resource_class': 'gold',
            'count': rng.randint(1, 4), 'start': iso(start), 'end': iso(end)})
        codes.append(resp.status_code)
    return codes


def overlaps(db):
    """Pairs of holding rows of one node whose blocked windows overlap,
    found by a query of its own (not the code under test)."""
    with db.engine.connect() as conn:
        return conn.execute(sa.text(
            'SELECT a.id, b.id FROM lease_nodes a JOIN lease_nodes b '
            'ON a.node_id = b.node_id AND a.id < b.id '
            'WHERE a.holding AND b.holding '
            'AND a.start_at < b.block_end AND b.start_at < a.block_end'
        )).all()


def test_concurrent_creators_never_double_book(site, conf):
    conf.set_override('cleaning_margin', MARGIN, 'lease')
    site.nodes(12)
    with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(lambda seed: _book(site, seed),
                                range(THREADS)))
    codes = [code for result in results for code in result]
    assert set(codes) <= {201, 409}, codes
    assert codes.count(201) > 10 and codes.count(409) > 0, codes
    assert overlaps(site.db) == []
    with site.db.engine.connect() as conn:
        gaps = conn.execute(sa.text(
            'SELECT MIN(block_end - end_at) FROM lease_nodes')).scalar()
    assert gaps is not None


def test_postgresql_refuses_an_overlap_written_by_hand(site):
    """The guarantee is the database's: a raw INSERT that skips every
    Python check is refused by the exclusion constraint."""
    if site.backend != 'postgresql':
        return
    (node,) = site.nodes(1)
    lease = site.client.post('/v1/leases', json={
        'project': 'p', 'candidate_nodes': [node.uuid],
        'start': iso(site.clock() + datetime.timedelta(hours=1)),
        'end': iso(site.clock() + datetime.timedelta(hours=2))}).json
    row = {'node': node.id, 'start': site.clock() + datetime.timedelta(
        minutes=90), 'end': site.clock() + datetime.timedelta(hours=3)}
    with site.db.engine.connect() as conn:
        lease_id = conn.execute(sa.text(
            'SELECT id FROM leases WHERE uuid = :u'), {'u': lease['uuid']}
        ).scalar()
        try:
            conn.execute(sa.text(
                'INSERT INTO lease_nodes (lease_id, node_id, project, '
                'start_at, end_at, block_end, holding) VALUES (:l, :node, '
                "'q', :start, :end, :end, true)"), dict(row, l=lease_id))
        except Exception as exc:  # oslo.db wraps it as DBError
            assert 'lease_nodes_no_overlap' in str(exc)
        else:
            raise AssertionError('the overlapping row was accepted')
