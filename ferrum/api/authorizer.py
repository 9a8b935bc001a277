# SPDX-License-Identifier: Apache-2.0
"""Policy decisions: oslo.policy's, cheaper to make and remembered.

The rules and their evaluation stay oslo.policy's (:mod:`ferrum.api.policy`
registers Ironic's defaults; operators override them in the policy file).
What this module changes is what each decision costs:

- :class:`Enforcer` checks the policy file once per :attr:`CHECK_INTERVAL`
  (one second) when a request asks (:meth:`Enforcer.check_file`), not
  before every rule evaluated: oslo.policy stats the file, searches the
  configuration directories for it and for ``policy.d`` when there is no
  file, and walks every registered default, on every ``enforce()``;
- :func:`_check` is oslo.policy's own evaluation of a check tree's node,
  with the check's signature inspected once per check class instead of at
  every node of every evaluation (``inspect.getfullargspec``, 5-10 µs a
  node, three quarters of a cold evaluation of one of Ironic's check
  strings: see doc/performance.md);
- :class:`Authorizer` remembers each decision until the rules change.
"""

import inspect
import threading
import time
from collections.abc import Callable, Hashable, Mapping, MutableMapping
from typing import Any

from oslo_config import cfg
from oslo_policy import _checks
from oslo_policy import policy

Clock = Callable[[], float]

# ---- the check tree's evaluation -------------------------------------------

#: oslo.policy's own node evaluation, kept for checks that are not bound
#: methods (an instance given a ``__call__`` of its own).
_OSLO_CHECK = _checks._check
#: Check class ``__call__`` -> whether it is the legacy three-argument one.
_LEGACY: dict[Callable[..., Any], bool] = {}


def _check(rule: _checks.BaseCheck, target: _checks.TargetT,
           creds: MutableMapping[str, Any], enforcer: policy.Enforcer,
           current_rule: str | None) -> bool:
    """oslo.policy's ``_checks._check``: call ``rule`` with the arguments
    its ``__call__`` takes (a legacy check takes no ``current_rule``), the
    signature looked up once per ``__call__`` instead of on every call."""
    function = getattr(rule.__call__, '__func__', None)
    if function is None:
        return _OSLO_CHECK(rule, target, creds, enforcer, current_rule)
    legacy = _LEGACY.get(function)
    if legacy is None:
        # The test oslo.policy makes, on the same bound method.
        legacy = len(inspect.getfullargspec(rule.__call__).args) <= 4
        _LEGACY[function] = legacy
    if legacy:
        return rule(target, creds, enforcer)
    return rule(target, creds, enforcer, current_rule)


def _install_check() -> None:
    """Every check tree node (``AndCheck``, ``OrCheck``, ``RuleCheck``...,
    and ``Enforcer.enforce``) calls ``_checks._check`` through the module:
    replacing it there is enough, and idempotent."""
    _checks._check = _check


# ---- the policy file -------------------------------------------------------

class StillUnusable(Exception):
    """The policy file did not parse when it was last read, less than
    :attr:`Enforcer.CHECK_INTERVAL` ago (the error was raised then)."""


class Enforcer(policy.Enforcer):
    """oslo.policy's Enforcer, its policy file checked when asked, at most
    once per :attr:`CHECK_INTERVAL`.

    ``enforce()`` loads the rules once (at the first evaluation, or when
    :func:`ferrum.api.policy.check_rules` reads them at start-up) and never
    re-reads the file itself: :meth:`check_file` does, once per request at
    most (:class:`Authorizer`), so a file changed on disk is in force
    within a second, and never in the middle of a request's checks.
    """

    #: Seconds between two checks of the policy file's mtime.
    CHECK_INTERVAL = 1.0

    def __init__(self, conf: cfg.ConfigOpts,
                 clock: Clock = time.monotonic) -> None:
        super().__init__(conf)
        _install_check()
        self.clock = clock
        self._checked_at: float | None = None
        self._failure: Exception | None = None
        # Requests that find the check due at once read one after the
        # other (oslo.policy's loading replaces its state in steps).
        self._reading = threading.Lock()

    def load_rules(self, force_reload: bool = False) -> None:
        """oslo.policy calls this before every evaluation: only the first
        time (or forced) does it read the file."""
        if force_reload or self._checked_at is None:
            self._read(force_reload)

    def check_file(self) -> None:
        """Re-read the policy file if it changed, unless it was checked
        less than :attr:`CHECK_INTERVAL` ago.

        A file that failed to parse stays failed until it parses: each
        check reads it again, and meanwhile every call raises (oslo.policy
        alone would raise once, then go on with the rules it had, revoked
        ones included).

        :raises ValueError: and the other errors of an unparsable file,
            when it was read now.
        :raises StillUnusable: it did not parse when last read.
        """
        if (self._checked_at is None
                or self.clock() - self._checked_at >= self.CHECK_INTERVAL):
            self._read(force_reload=self._failure is not None)
        elif self._failure is not None:
            raise StillUnusable(str(self._failure))

    def _read(self, force_reload: bool) -> None:
        with self._reading:
            self._checked_at = self.clock()
            try:
                super().load_rules(force_reload)
            except Exception as exc:
                self._failure = exc
                raise
            self._failure = None


# ---- the decisions ---------------------------------------------------------

def _frozen(values: Mapping[str, Any]) -> Hashable:
    return tuple(sorted((key, tuple(value) if isinstance(value, list)
                         else value) for key, value in values.items()))


class Caller:
    """The caller's policy values (oslo.context's credentials) and their
    key among the decisions, computed once per request."""

    __slots__ = ('values', 'key')

    def __init__(self, values: Mapping[str, Any]) -> None:
        # Never handed to oslo.policy itself, which adds to what it is
        # given: Authorizer.allowed() gives it a copy.
        self.values = values
        self.key = _frozen(values)


class Authorizer:
    """The app's one Enforcer, and the decisions it made on its rules.

    A decision is a pure function of the rules, the rule's name, the target
    and the caller's credentials. So decisions are remembered until the
    rules change: :meth:`refresh` (once per request) checks the file
    (:meth:`Enforcer.check_file`); a new rule set forgets every decision.
    """

    #: Distinct (rule, target, credentials) remembered at most.
    MAX_DECISIONS = 20000

    def __init__(self, enforcer: Enforcer,
                 service_project: str | None = None) -> None:
        """
        :param service_project: the project whose ``service`` role users
            the ``service_role`` rule elevates (``[DEFAULT]
            rbac_service_project_name``), or None when that is off: as
            Ironic, every target then carries it as
            ``config.service_project_name``.
        """
        self.enforcer = enforcer
        self._config: dict[str, str] = (
            {} if service_project is None
            else {'config.service_project_name': service_project})
        self._lock = threading.Lock()
        # The rules and the decisions made on them, replaced as one pair:
        # a decision made on rules that refresh() replaced meanwhile must
        # not land among the new rules' decisions (a revoked rule would go
        # on allowing). One attribute, so a lookup needs no lock.
        self._state: tuple[object, dict[Hashable, bool]] = (enforcer.rules,
                                                            {})

    def refresh(self) -> None:
        """Re-read the file if it changed (at most once a second).

        :raises ValueError: and the other errors of an unparsable file.
        :raises StillUnusable: see :meth:`Enforcer.check_file`.
        """
        self.enforcer.check_file()
        rules = self.enforcer.rules
        if rules is not self._state[0]:
            with self._lock:
                # Holding the rules keeps their identity from being reused.
                self._state = (rules, {})

    def allowed(self, rule: str, target: Mapping[str, Any],
                caller: Caller) -> bool:
        key = (rule, caller.key, _frozen(target) if target else ())
        rules, decisions = self._state
        found = decisions.get(key)
        if found is None:
            # enforce() adds to the credentials it is given: a copy.
            found = bool(self.enforcer.enforce(
                rule, {**target, **self._config}, dict(caller.values)))
            with self._lock:
                if self._state[0] is rules:
                    if len(decisions) >= self.MAX_DECISIONS:
                        decisions.clear()
                    decisions[key] = found
        return found
