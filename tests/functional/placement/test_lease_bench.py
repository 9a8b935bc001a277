# SPDX-License-Identifier: Apache-2.0
"""``tools/bench/leases.py --placement`` keeps working (at a tiny size),
and what it counts holds: a lease's start and end each cost the lease
engine the same Placement requests whatever the lease's size."""

import json
import pathlib
import subprocess
import sys

from tests.real import require_real

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_lease_benchmark_with_placement_counts_o1_claims():
    try:
        import placement.wsgi  # noqa: F401
    except ImportError:
        require_real('openstack-placement (pip install -e .[test])')
    done = subprocess.run(
        [sys.executable, str(ROOT / 'tools' / 'bench' / 'leases.py'),
         '--placement', '--repetitions', '1', '--sizes', '1', '3'],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.splitlines()[-1])
    assert result['benchmark'] == 'leases_placement'
    for size in (1, 3):
        lease = result['lease_%d' % size]
        # One claim (and the idempotent class creation) per start; the
        # end reads the lease's consumer and empties it in one POST.
        assert lease['requests']['start']['engine'] == {
            'POST /allocations': 1.0, 'PUT /resource_classes/{class}': 1.0,
            'total': 2.0}
        assert lease['requests']['end']['engine'].get(
            'POST /allocations') == 1.0
        assert lease['claim_requests'] == {'start': 1.0, 'end': 2.0}
        assert lease['start']['engine_runs'] == 1
        assert lease['end']['engine_runs'] == 1
        # The sync worker pushed each node's reservation inventory.
        assert lease['requests']['start']['sync']
    assert result['o1_claims_start'] and result['o1_claims_end']
