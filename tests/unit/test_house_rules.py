# SPDX-License-Identifier: Apache-2.0
"""House rules a reviewer checks first, enforced: sizes, names, types."""

import ast
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MAX_LINES = 800


def _modules(top):
    for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
        for name in files:
            if name.endswith('.py'):
                yield os.path.join(folder, name)


def test_no_module_is_over_the_line_budget():
    big = []
    for path in list(_modules('ferrum')) + list(_modules('tools')):
        with open(path) as source:
            count = sum(1 for _ in source)
        if count > MAX_LINES:
            big.append('%s (%d lines)' % (os.path.relpath(path, ROOT), count))
    assert big == [], 'split these by concern: %s' % big


def test_no_grab_bag_modules():
    bad = [os.path.relpath(p, ROOT)
           for p in list(_modules('ferrum')) + list(_modules('tests'))
           if os.path.basename(p) in ('utils.py', 'helpers.py', 'misc.py')]
    assert bad == [], 'name modules after what they hold: %s' % bad


def test_package_type_checks_strictly():
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--ignore-missing-imports',
         'ferrum'], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# ---- layering: which package may import which ------------------------------

#: Each package of ferrum/ and the packages it may import. A new package
#: (or a new edge) is a design decision: add it here on purpose.
LAYERS = {
    'common': set(),
    'conf': {'common'},
    'db': {'common', 'conf'},
    'objects': {'common', 'db'},
    'periodic': {'common'},
    'drivers': {'common', 'conf', 'db', 'objects', 'periodic'},
    'placement': {'common', 'conf', 'db', 'objects', 'periodic'},
    'conductor': {'allocation', 'common', 'conf', 'db', 'drivers',
                  'placement', 'objects', 'periodic'},
    # placement: the placement allocation backend claims through the one
    # Placement client and queues consumer releases there (issue 21).
    'allocation': {'common', 'conductor', 'conf', 'db', 'placement',
                   'objects', 'periodic'},
    'rpc': {'common', 'conductor', 'conf', 'db', 'objects'},
    # Above the conductor: its engine drives conductor verbs, and the
    # programs that start a conductor hand it the engine's periodic task.
    # Not placement: the engine reaches it through ctx.placement.
    'leases': {'allocation', 'common', 'conductor', 'objects', 'periodic'},
    'api': {'common', 'conductor', 'conf', 'db', 'drivers', 'placement',
            'leases', 'objects', 'rpc'},
    'cmd': {'api', 'common', 'conductor', 'conf', 'db', 'drivers',
            'placement', 'leases', 'objects', 'rpc'},
    'testing': {'common', 'conductor', 'conf', 'db', 'drivers', 'objects',
                'periodic'},
    'ferrum': set(),  # ferrum/__init__.py
}
#: The one cycle allowed: allocation and conductor are one layer, two
#: nouns, as Ironic's conductor/allocations.py is part of its conductor.
#: - allocation -> conductor: every allocation flow runs on a conductor,
#:   with its context (database, workers, in-flight record, backend), and
#:   backfill and release lock nodes through its task manager;
#: - conductor -> allocation: the conductor starts those flows (the
#:   manager's allocation verbs, resuming its own at start-up and after a
#:   database outage, the take-over periodic), picks the allocation
#:   backend at start-up (allocation/backends.py), and tear-down and an
#:   instance_uuid PATCHed away detach the node's allocation
#:   (allocation/release.py).
#: The backend itself is an interface the conductor owns
#: (conductor/context.py AllocationBackend), so the conductor's own verbs
#: (node deletion) reach the backend through ctx.allocations without
#: importing it. Breaking the rest would mean a second, narrower context
#: type for allocation's flows, or passing the allocation verbs into the
#: conductor from the programs that start it (62 constructions).
ALLOWED_CYCLE = ['allocation', 'conductor']


def _import_graph():
    sys.path.insert(0, os.path.join(ROOT, 'tools'))
    try:
        import import_cycles
    finally:
        sys.path.pop(0)
    import pathlib
    return import_cycles.analyse(pathlib.Path(ROOT) / 'ferrum')


def test_packages_import_only_their_lower_layers():
    edges = _import_graph()['package_edges']
    unknown = sorted(set(edges) - set(LAYERS))
    assert unknown == [], 'add these packages to LAYERS: %s' % unknown
    wrong = {package: sorted(set(targets) - LAYERS[package])
             for package, targets in edges.items()
             if set(targets) - LAYERS[package]}
    assert wrong == {}, 'imports across the layering: %s' % wrong


def test_no_import_cycles():
    graph = _import_graph()
    assert graph['module_cycles'] == 0, graph['module_cycle_groups']
    assert [c for c in graph['package_cycles'] if c != ALLOWED_CYCLE] == []


#: Tables written only by ferrum/objects, which queues what Placement must
#: be told in the same transaction (objects/placement_queue.py): a write
#: elsewhere would never reach Placement.
_OBJECTS_TABLES = re.compile(
    r'models\.(Node|NodeTrait|Allocation|AllocationTrait)\b'
    r'|\b(node|trait|allocation)_obj\.(TABLE|TRAITS)\b')


def _dml_targets(tree):
    """The first argument of each sa.update/insert/delete call, as source,
    a local name replaced by what was assigned to it."""
    assigned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = ast.unparse(node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None \
                and isinstance(node.target, ast.Name):
            assigned[node.target.id] = ast.unparse(node.value)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and node.args
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ('update', 'insert', 'delete')
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ('sa', 'sqlalchemy')):
            target = node.args[0]
            text = ast.unparse(target)
            if isinstance(target, ast.Name):
                text = assigned.get(target.id, text)
            yield node.lineno, text


def test_nodes_traits_and_allocations_are_written_only_in_objects():
    found = []
    for path in _modules('ferrum'):
        relative = os.path.relpath(path, ROOT)
        if relative.startswith(('ferrum/objects/', 'ferrum/db/')):
            continue
        with open(path) as source:
            tree = ast.parse(source.read())
        found.extend('%s:%d %s' % (relative, line, text)
                     for line, text in _dml_targets(tree)
                     if _OBJECTS_TABLES.search(text))
    assert found == [], ('write these through ferrum/objects, which queues '
                         'the change for Placement: %s' % found)


def test_ruff_passes():
    # The rules and their settings are in pyproject.toml (style.md: E, F,
    # B, G, I at 79 columns); .pre-commit-config.yaml runs the same check.
    result = subprocess.run(
        [sys.executable, '-m', 'ruff', 'check', '--no-cache', 'ferrum',
         'tools', 'tests', 'client'], cwd=ROOT, capture_output=True,
        text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# ---- tests: shared through conftest.py and helper modules ------------------

def _is_test_or_conftest(dotted):
    name = dotted.rsplit('.', 1)[-1]
    return name == 'conftest' or name.startswith('test_')


def _imported_tests_and_conftests(path):
    """What ``path`` imports that is a test module or a conftest.py."""
    with open(path) as source:
        tree = ast.parse(source.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            # "from tests.x import test_y" imports the module test_y.
            names = [node.module] + ['%s.%s' % (node.module, alias.name)
                                     for alias in node.names]
        else:
            continue
        found += ['%s:%d %s' % (os.path.relpath(path, ROOT), node.lineno,
                                name)
                  for name in names if _is_test_or_conftest(name)]
    return found


def test_no_test_module_or_conftest_is_imported():
    # doc/testing.md: fixtures are used by name, from a conftest.py (or a
    # plugin the root conftest names); helpers live in helper modules. A
    # test function imported elsewhere is collected there again, and an
    # imported fixture is shadowed by the parameter naming it (F811); both
    # tie unrelated tests to one test module's insides.
    found = [hit for path in _modules('tests')
             for hit in _imported_tests_and_conftests(path)]
    assert found == [], (
        'move what these share to a conftest.py (fixtures) or a helper '
        'module (anything else): %s' % found)


def test_no_redefinition_is_silenced():
    # F811 (a name redefined, as a fixture imported and then taken as a
    # parameter) is the trace of a fixture imported instead of found by
    # name; a bare noqa would hide it as well.
    silenced = re.compile(r'#\s*noqa(?!:)|#\s*noqa:[^#]*\bF811\b')
    found = []
    for top in ('ferrum', 'tools', 'tests', 'client'):
        for path in _modules(top):
            with open(path) as source:
                found += ['%s:%d' % (os.path.relpath(path, ROOT), number)
                          for number, line in enumerate(source, 1)
                          if silenced.search(line)]
    assert found == [], 'import fixtures by name, not by import: %s' % found
