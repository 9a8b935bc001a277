# SPDX-License-Identifier: Apache-2.0
"""setup.cfg's install_requires is what ferrum/ imports, no more, no less.

A service's dependencies are what it imports: a tool it does not import
(a linter, a test runner) belongs in the test extra, and a library it
imports must be declared even when another dependency happens to pull it
in today.
"""

import ast
import configparser
import importlib.metadata
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

#: Parts of ferrum/ that import what an extra (or their host) provides.
OPTIONAL = {
    # The oneview hardware type: the [oneview] extra.
    'ferrum/drivers/oneview': {'hpOneView'},
    # The redfish hardware type: the [redfish] extra.
    'ferrum/drivers/redfish': {'sushy'},
    # The driver test kit is a pytest plugin: pytest loads it.
    'ferrum/testing': {'pytest', '_pytest'},
}


def _name(requirement):
    """A requirement's distribution name, normalised (PEP 503)."""
    name = re.match(r'[A-Za-z0-9._-]+', requirement.strip()).group(0)
    return re.sub(r'[-_.]+', '-', name).lower()


def _install_requires():
    parser = configparser.ConfigParser()
    parser.read(ROOT / 'setup.cfg')
    return {_name(line) for line in
            parser['options']['install_requires'].splitlines()
            if line.strip()}


def _imports():
    """``{top-level module: first file importing it}`` of ferrum/, third
    party only, optional parts left out."""
    found = {}
    for path in sorted((ROOT / 'ferrum').rglob('*.py')):
        relative = path.relative_to(ROOT).as_posix()
        optional = set().union(*(modules for part, modules in OPTIONAL.items()
                                 if relative.startswith(part + '/')))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split('.')[0]
                if (top in sys.stdlib_module_names or top == 'ferrum'
                        or top in optional):
                    continue
                found.setdefault(top, relative)
    return found


def _distributions(module):
    return {_name(dist) for dist in
            importlib.metadata.packages_distributions().get(module, [])}


def test_every_import_is_declared():
    declared = _install_requires()
    missing = {module: where for module, where in _imports().items()
               if not _distributions(module) & declared}
    assert missing == {}, (
        'imported by ferrum/ but not in install_requires: %s' % missing)


def test_every_declared_dependency_is_imported():
    provided = set()
    for module in _imports():
        provided |= _distributions(module)
    unused = sorted(_install_requires() - provided)
    assert unused == [], (
        'in install_requires but not imported by ferrum/ (tools belong in '
        'the test extra): %s' % unused)


def test_the_test_extra_keeps_the_tools():
    parser = configparser.ConfigParser()
    parser.read(os.path.join(ROOT, 'setup.cfg'))
    test = {_name(line) for line in
            parser['options.extras_require']['test'].splitlines()
            if line.strip()}
    assert {'ruff', 'mypy', 'pytest'} <= test
