#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmark two trees of ferrum against each other: A (old) and B (new).

::

    python3 tools/bench/ab.py OLD_COMMIT [NEW] [--backend postgresql]
        [--nodes 1000] [--concurrency 8] [--rounds 1]

``OLD_COMMIT`` and ``NEW`` are revisions of the repository this script
lives in. ``NEW`` defaults to ``HEAD``; ``.`` or ``WORKTREE`` means this
checkout as it is, uncommitted changes included (to measure a change
before committing it). Only the standard library is needed to start it.

Each commit gets a detached worktree, ``CACHE/<sha>/tree``, and a
virtualenv, ``CACHE/<sha>/venv`` (``CACHE`` is ``--cache``, by default
``~/.cache/ferrum-ab``), built as the Makefile builds ``.venv``
(``python3 -m venv``, then ``pip install -e`` the tree, with its
``postgresql`` extra) so the tree's own ``setup.cfg`` decides its
dependencies. The first build of a tree takes a minute or more; a
``.ab-complete`` stamp in the venv marks it done, and later runs reuse
it. The checkout itself uses its ``.venv`` when there is one, else a venv
under ``CACHE/worktree-<hash of its path>``, rebuilt when ``setup.cfg``
or ``pyproject.toml`` change.

A round is A B B A, so drift in the machine's load hits both sides alike;
``--rounds 2`` runs A B B A A B B A. Each run measures two figures, each
on a deployment of its own on a fresh database (a new SQLite file, or a
new database on one PostgreSQL cluster that every run shares):

* ``nodes_per_s``: ``tools/bench/api_flow.py``, enroll to available;
* ``allocs_per_s``: ``tools/bench/allocations.py``.

The deployment is the side's own ``tools/bench/deployment.py
--conductors 0`` (the all-in-one ``ferrum``), run with the side's venv
python so that the side's binaries start (the new tree's launcher when
the side has none). The benchmark clients are always the NEW tree's, run
with the NEW venv, so both sides answer the same requests.

PostgreSQL: the cluster is the new tree's test launcher
(``tests/postgres.py``), run in the new venv (pytest is installed there
if missing: the launcher is a pytest plugin module). Not
``deployment.py --throwaway-postgres``: that imports the launcher into
the side's venv, which has no pytest, and would initdb a cluster per run.

Prints one JSON line: for each figure, each side's values in run order,
their medians, ``ratio`` (new median / old median: above 1 means NEW is
faster) and each side's ``spread``, (max - min) / median; ``runs`` lists
every run with the server's CPU seconds. Progress goes to standard error.
The exit status is 1, after the line (with what was measured so far and
``failed``), when a run failed: the benchmark or the launcher exited
non-zero or printed no figure. The rest of the runs are then skipped.
"""

import argparse
import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

_CHECKOUT = pathlib.Path(__file__).resolve().parents[2]
_WORKTREE = ('.', 'WORKTREE')
#: Figure -> the benchmark (under tools/bench/) that prints it, in the
#: order each run measures them.
_FIGURES = {'nodes_per_s': 'api_flow.py', 'allocs_per_s': 'allocations.py'}
#: One benchmark run, start-up included: 1000 nodes take a few minutes
#: on a loaded 2-core machine; this only bounds a hung run.
_RUN_TIMEOUT = 3600.0
_STAMP = '.ab-complete'

#: Runs in the new venv with the new tree as the working directory (so
#: ``tests`` is importable): starts one cluster, says where it is, and
#: removes it when ab.py closes its standard input, or dies.
_LAUNCHER = '''
import json, sys
from tests import postgres
bindir = postgres.find_bindir()
if bindir is None:
    raise SystemExit('no PostgreSQL server binaries found; '
                     'install postgresql')
server = postgres.PostgresServer.create(bindir, postgres._run_as())
try:
    server.start()
    print(json.dumps({'bindir': bindir, 'host': server.host,
                      'port': server.port, 'user': server.user}),
          flush=True)
    sys.stdin.read()
finally:
    server.close()
'''


class RunFailed(Exception):
    """A benchmark run exited non-zero or printed no figure."""


@dataclasses.dataclass
class Side:
    """One tree to measure and the virtualenv its programs run from."""

    label: str
    tree: pathlib.Path
    python: pathlib.Path


def _log(message: str) -> None:
    print('ab: %s' % message, file=sys.stderr, flush=True)


def _git(*args: str, cwd: pathlib.Path = _CHECKOUT) -> str:
    return subprocess.run(['git', *args], cwd=cwd, check=True, text=True,
                          capture_output=True).stdout.strip()


def _head(tree: pathlib.Path) -> str | None:
    """The commit a cached worktree has checked out, if it is one."""
    if not (tree / '.git').exists():
        return None
    try:
        return _git('rev-parse', 'HEAD', cwd=tree)
    except subprocess.CalledProcessError:
        return None


def _pip(python: pathlib.Path, *args: str) -> None:
    # pip's own configuration (index, wheel directories, constraints)
    # applies as it does for `make`. Its warnings are shown only when it
    # fails: the build backend's are pages long.
    proc = subprocess.run([str(python), '-m', 'pip', 'install', '-q', *args],
                          capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit('ab: pip install %s failed' % ' '.join(args))


def _venv(tree: pathlib.Path, venv: pathlib.Path, stamp: str,
          base_python: str) -> pathlib.Path:
    """The venv's python, after building it unless ``stamp`` says it is
    complete for this tree."""
    python = venv / 'bin' / 'python'
    marker = venv / _STAMP
    if marker.exists() and marker.read_text() == stamp:
        return python
    _log('building %s from %s (minutes the first time)' % (venv, tree))
    # From scratch: a venv without its stamp may be half built.
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([base_python, '-m', 'venv', str(venv)], check=True)
    _pip(python, '--upgrade', 'pip')
    _pip(python, '-e', '%s[postgresql]' % tree)
    marker.write_text(stamp)
    return python


def _ensure(python: pathlib.Path, module: str, *requirement: str) -> None:
    """Install ``requirement`` into ``python``'s venv if ``module`` does not
    import there."""
    if subprocess.run([str(python), '-c', 'import ' + module],
                      capture_output=True).returncode:
        _log('installing %s into %s' % (' '.join(requirement), python))
        _pip(python, *requirement)


def _side(revision: str, args: argparse.Namespace) -> Side:
    cache: pathlib.Path = args.cache
    if revision in _WORKTREE:
        head = _git('rev-parse', '--short', 'HEAD')
        dirty = bool(_git('status', '--porcelain'))
        label = head + ('+changes' if dirty else '')
        own = _CHECKOUT / '.venv' / 'bin' / 'python'
        if own.exists():
            python = own
        else:
            # Keyed by what decides the dependencies, since the code
            # itself is installed editable and may change freely.
            deps = hashlib.sha256(b''.join(
                (_CHECKOUT / name).read_bytes()
                for name in ('setup.cfg', 'pyproject.toml'))).hexdigest()
            key = hashlib.sha256(str(_CHECKOUT).encode()).hexdigest()[:12]
            python = _venv(_CHECKOUT, cache / ('worktree-' + key) / 'venv',
                           deps, args.python)
        if args.backend == 'postgresql':
            _ensure(python, 'psycopg2', '-e', '%s[postgresql]' % _CHECKOUT)
        return Side(label, _CHECKOUT, python)
    sha = _git('rev-parse', '--verify', revision + '^{commit}')
    tree = cache / sha / 'tree'
    if _head(tree) != sha:
        _log('checking out %s into %s' % (sha[:7], tree))
        shutil.rmtree(tree, ignore_errors=True)
        _git('worktree', 'prune')
        tree.parent.mkdir(parents=True, exist_ok=True)
        _git('worktree', 'add', '--detach', '--force', str(tree), sha)
    python = _venv(tree, cache / sha / 'venv', sha, args.python)
    return Side(sha[:7], tree, python)


@contextlib.contextmanager
def _postgres(new: Side) -> Iterator[dict[str, Any]]:
    """One throwaway cluster for every run: where it is and its bindir."""
    _ensure(new.python, 'pytest', 'pytest')
    proc = subprocess.Popen([str(new.python), '-c', _LAUNCHER],
                            cwd=new.tree, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    try:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit('ab: the PostgreSQL launcher exited with %s'
                             % proc.wait())
        yield json.loads(line)
    finally:
        proc.stdin.close()
        proc.wait(timeout=120)


@contextlib.contextmanager
def _database(pg: dict[str, Any] | None, workdir: pathlib.Path,
              name: str) -> Iterator[str]:
    """A fresh, empty database for one deployment, removed after it."""
    if pg is None:
        path = workdir / (name + '.sqlite')
        try:
            yield 'sqlite:///%s' % path
        finally:
            for leftover in workdir.glob(name + '.sqlite*'):
                leftover.unlink()
        return
    where = ['-h', pg['host'], '-p', str(pg['port']), '-U', pg['user']]
    subprocess.run([os.path.join(pg['bindir'], 'createdb'), *where, name],
                   check=True)
    try:
        yield 'postgresql+psycopg2://%s@%s:%d/%s' % (
            pg['user'], pg['host'], pg['port'], name)
    finally:
        # Dropped, not kept: its dead rows would keep autovacuum busy
        # during the next run.
        subprocess.run([os.path.join(pg['bindir'], 'dropdb'), *where,
                        '--force', name], check=True)


def _measure(side: Side, new: Side, figure: str, database_url: str,
             args: argparse.Namespace) -> tuple[float, Any]:
    """One deployment of ``side``, one benchmark: the figure and the
    server's CPU seconds."""
    launcher = side.tree / 'tools' / 'bench' / 'deployment.py'
    if not launcher.exists():
        launcher = new.tree / 'tools' / 'bench' / 'deployment.py'
    command = [str(side.python), str(launcher), '--conductors', '0',
               '--database-url', database_url, '--',
               str(new.python), str(new.tree / 'tools' / 'bench' /
                                    _FIGURES[figure]),
               '--url', '{url}', '--nodes', str(args.nodes),
               '--concurrency', str(args.concurrency)]
    try:
        # Standard error (the launcher's and the benchmark's progress)
        # passes through; standard output holds their JSON lines.
        proc = subprocess.run(command, stdout=subprocess.PIPE, text=True,
                              timeout=_RUN_TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise RunFailed('%s on %s: no end within %.0f s'
                        % (figure, side.label, _RUN_TIMEOUT)) from exc
    lines = []
    for line in proc.stdout.splitlines():
        with contextlib.suppress(ValueError):
            lines.append(json.loads(line))
    found = [line for line in lines
             if isinstance(line, dict) and figure in line]
    cpu = [line['cpu_s'] for line in lines
           if isinstance(line, dict) and 'cpu_s' in line]
    if proc.returncode or not found:
        raise RunFailed('%s on %s: exit status %d, output %s' % (
            figure, side.label, proc.returncode, proc.stdout[-2000:]))
    return float(found[0][figure]), cpu[0] if cpu else None


def _summary(old: list[float], new: list[float]) -> dict[str, Any]:
    result: dict[str, Any] = {'old': old, 'new': new}
    for name, values in (('old', old), ('new', new)):
        if values:
            median = statistics.median(values)
            result[name + '_median'] = round(median, 2)
            result[name + '_spread'] = round(
                (max(values) - min(values)) / median, 3) if median else None
    if old and new and result['old_median']:
        result['ratio'] = round(statistics.median(new) /
                                statistics.median(old), 3)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('old', metavar='OLD_COMMIT')
    parser.add_argument('new', metavar='NEW', nargs='?', default='HEAD',
                        help='a revision, or . (or WORKTREE) for this '
                             'checkout as it is (default: HEAD)')
    parser.add_argument('--backend', choices=('sqlite', 'postgresql'),
                        default='sqlite')
    parser.add_argument('--nodes', type=int, default=1000)
    parser.add_argument('--concurrency', type=int, default=8)
    parser.add_argument('--rounds', type=int, default=1,
                        help='rounds of A B B A (default: 1)')
    parser.add_argument('--cache', type=pathlib.Path, default=pathlib.Path(
        os.environ.get('XDG_CACHE_HOME', pathlib.Path.home() / '.cache'),
        'ferrum-ab'), help='worktrees and venvs (default: %(default)s)')
    parser.add_argument('--python', default='python3',
                        help='the interpreter venvs are made from, as the '
                             'Makefile\'s PYTHON (default: %(default)s)')
    args = parser.parse_args()
    # git runs in the checkout, everything else here: one absolute path.
    args.cache = args.cache.expanduser().resolve()
    if args.rounds < 1 or args.nodes < 1 or args.concurrency < 1:
        parser.error('--rounds, --nodes and --concurrency must be 1 or more')

    old, new = _side(args.old, args), _side(args.new, args)
    order = 'ABBA' * args.rounds
    values: dict[str, dict[str, list[float]]] = {
        figure: {'old': [], 'new': []} for figure in _FIGURES}
    runs: list[dict[str, Any]] = []
    result: dict[str, Any] = {
        'bench': 'ab', 'backend': args.backend, 'old': old.label,
        'new': new.label, 'nodes': args.nodes,
        'concurrency': args.concurrency, 'order': order,
        'started': datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec='seconds'),
        'load': [round(load, 2) for load in os.getloadavg()]}
    failed = None
    workdir = pathlib.Path(tempfile.mkdtemp(prefix='ferrum-ab-'))
    try:
        with contextlib.ExitStack() as stack:
            pg = (stack.enter_context(_postgres(new))
                  if args.backend == 'postgresql' else None)
            for index, letter in enumerate(order):
                name, side = ('old', old) if letter == 'A' else ('new', new)
                for figure in _FIGURES:
                    _log('run %d/%d (%s, %s): %s' % (
                        index + 1, len(order), letter, side.label, figure))
                    try:
                        with _database(pg, workdir, 'ab_%d_%s' % (
                                index, figure)) as url:
                            value, cpu = _measure(side, new, figure, url,
                                                  args)
                    except RunFailed as exc:
                        failed = str(exc)
                        _log('failed: ' + failed)
                        break
                    values[figure][name].append(value)
                    runs.append({'side': name, 'figure': figure,
                                 'value': value, 'server_cpu_s': cpu})
                if failed:
                    break
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result['figures'] = {figure: _summary(sides['old'], sides['new'])
                         for figure, sides in values.items()}
    result['runs'] = runs
    if failed:
        result['failed'] = failed
    print(json.dumps(result), flush=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
