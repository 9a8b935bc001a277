#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Report import cycles in ferrum/, between packages and between modules.

Reads the source with ``ast`` (nothing is imported), so it sees every
``import`` and ``from ... import`` statement, including those under
``if TYPE_CHECKING:`` and inside functions: a cycle hidden from the run
time is still a cycle in the design. Prints one JSON line::

    {"package_cycles": [...], "module_cycles": N, "package_edges": {...}}

``package_cycles`` lists the strongly connected groups of ferrum's
top-level packages (``api``, ``conductor``, ...); ``module_cycles`` counts
the strongly connected groups of more than one module.
Usage: ``python tools/import_cycles.py [--root ferrum] [--verbose]``.
"""

import argparse
import ast
import json
import pathlib
import sys


def module_name(root: pathlib.Path, path: pathlib.Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def imports_of(path: pathlib.Path, name: str, known: set[str]) -> set[str]:
    """The ferrum modules ``path`` imports (resolved to known modules)."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                up = package.split('.')[:len(package.split('.'))
                                         - node.level + 1]
                base = '.'.join(up + ([base] if base else []))
            # ``from pkg import module`` imports the module, not the
            # package's own code beyond its __init__; a name that is no
            # module is taken from ``base``.
            targets = [('%s.%s' % (base, a.name))
                       if '%s.%s' % (base, a.name) in known else base
                       for a in node.names]
        for target in targets:
            while target and target not in known:
                target = target.rpartition('.')[0]
            if target and target != name:
                found.add(target)
    return found


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively (no recursion limit to hit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    groups.append(sorted(group))
    return groups


def package_of(module: str) -> str:
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else parts[0]


def analyse(root: pathlib.Path) -> dict[str, object]:
    files = {module_name(root, p): p for p in root.rglob('*.py')}
    known = set(files)
    modules = {name: imports_of(path, name, known)
               for name, path in files.items()}
    packages: dict[str, set[str]] = {}
    for name, targets in modules.items():
        edges = packages.setdefault(package_of(name), set())
        edges.update(package_of(t) for t in targets
                     if package_of(t) != package_of(name))
    package_cycles = [g for g in strongly_connected(packages) if len(g) > 1]
    module_cycles = [g for g in strongly_connected(modules) if len(g) > 1]
    return {
        'package_cycles': package_cycles,
        'module_cycles': len(module_cycles),
        'module_cycle_groups': module_cycles,
        'package_edges': {k: sorted(v) for k, v in sorted(packages.items())},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--root', default=str(
        pathlib.Path(__file__).resolve().parents[1] / 'ferrum'))
    parser.add_argument('--verbose', action='store_true',
                        help='also print the module groups and the edges')
    args = parser.parse_args()
    result = analyse(pathlib.Path(args.root))
    if not args.verbose:
        result = {'package_cycles': result['package_cycles'],
                  'module_cycles': result['module_cycles']}
    print(json.dumps(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
