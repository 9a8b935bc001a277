# SPDX-License-Identifier: Apache-2.0
"""The driver test kit: what a driver author needs to test a driver.

Installed with ferrum, and loaded by pytest on its own (a ``pytest11``
entry point), so a third-party package's tests get these fixtures without
any ``conftest.py``:

* ``ferrum_conf``: a fresh configuration, its state in the test's
  directory; enable your driver with ``ferrum_conf.set_override``;
* ``ferrum_db``: a migrated SQLite database of its own;
* ``ferrum_conductor``: a started conductor on them (no periodic worker:
  run a periodic task yourself with ``task_method(conductor.ctx)``);
* ``ferrum_enroll``: ``ferrum_enroll(driver, **fields)`` enrolls a node.

And plain functions (:mod:`ferrum.testing.flows`): ``settled`` waits for a
node to reach a state, ``to_state`` drives a node to ``manageable``,
``available`` or ``active`` through the real verbs; and
:func:`ferrum.testing.checks.check_interface`, which runs ferrum's own
contract checks on an interface class. doc/drivers.md walks through it.
"""
