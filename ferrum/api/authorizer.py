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
  strings: see doc/performance/tenancy.md);
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
    within a second.

    oslo.policy builds a new rule set in steps (the file's rules, then
    policy.d, then the defaults) on the enforcer itself: :attr:`lock` is
    held while it reads, and every evaluation must hold it too
    (:meth:`Authorizer.allowed` does), so that none sees half a rule set.
    """

    #: Seconds between two checks of the policy file's mtime.
    CHECK_INTERVAL = 1.0

    def __init__(self, conf: cfg.ConfigOpts,
                 clock: Clock = time.monotonic) -> None:
        super().__init__(conf)
        _install_check()
        self.clock = clock
        self._checked_at: float | None = None
        self._reads = 0
        self._failure: Exception | None = None
        # Reentrant: enforce() calls load_rules() while it is held.
        self.lock = threading.RLock()

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
        reads, checked = self._reads, self._checked_at
        if checked is None or self.clock() - checked >= self.CHECK_INTERVAL:
            with self.lock:
                # A request that waited for another's read must not read
                # again (and miss the failure that read found).
                if self._reads == reads:
                    self._read(force_reload=self._failure is not None)
                    return
        if self._failure is not None:
            raise StillUnusable(str(self._failure))

    def _read(self, force_reload: bool) -> None:
        with self.lock:
            self._checked_at = self.clock()
            try:
                super().load_rules(force_reload)
            except Exception as exc:
                self._failure = exc
                raise
            else:
                self._failure = None
            finally:
                # Counted once done: a request that saw the count before
                # waited for this read, and does not read again.
                self._reads += 1


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
    and the caller's credentials, when the rules use oslo.policy's own
    checks only (not ``http:``, whose answer is another service's, nor an
    operator's custom check). So decisions on such rules are remembered
    until the rules change: :meth:`refresh` (once per request) checks the
    file (:meth:`Enforcer.check_file`); a new rule set forgets every
    decision.
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
        # The rules and the decisions made on them, replaced as one pair:
        # a decision made on rules that refresh() replaced meanwhile must
        # not land among the new rules' decisions (a revoked rule would go
        # on allowing). One attribute, so a lookup needs no lock.
        self._state: tuple[object, dict[Hashable, bool] | None] = (
            enforcer.rules, _decisions_for(enforcer.rules))

    def refresh(self) -> None:
        """Re-read the file if it changed (at most once a second).

        :raises ValueError: and the other errors of an unparsable file.
        :raises StillUnusable: see :meth:`Enforcer.check_file`.
        """
        self.enforcer.check_file()
        if self.enforcer.rules is not self._state[0]:
            with self.enforcer.lock:
                # Whole rules only (no read is under way while it is held);
                # holding them keeps their identity from being reused.
                rules = self.enforcer.rules
                self._state = (rules, _decisions_for(rules))

    def forget(self) -> None:
        """Forget every decision (the next check of each is evaluated)."""
        with self.enforcer.lock:
            rules, decisions = self._state
            self._state = (rules, None if decisions is None else {})

    def allowed(self, rule: str, target: Mapping[str, Any],
                caller: Caller) -> bool:
        key = (rule, caller.key, _frozen(target) if target else ())
        decisions = self._state[1]
        found = None if decisions is None else decisions.get(key)
        if found is None:
            with self.enforcer.lock:
                rules, decisions = self._state
                # enforce() adds to the credentials it is given: a copy.
                found = bool(self.enforcer.enforce(
                    rule, {**target, **self._config}, dict(caller.values)))
                if decisions is not None and self.enforcer.rules is rules:
                    if len(decisions) >= self.MAX_DECISIONS:
                        decisions.clear()
                    decisions[key] = found
        return found


#: oslo.policy's checks whose answer depends on the rule, the target and
#: the credentials alone.
_PURE = (_checks.TrueCheck, _checks.FalseCheck, _checks.RoleCheck,
         _checks.GenericCheck, _checks.RuleCheck, _checks.AndCheck,
         _checks.OrCheck, _checks.NotCheck)


def _decisions_for(rules: Mapping[str, Any]) -> dict[Hashable, bool] | None:
    """An empty memory of decisions for ``rules``, or None if a decision on
    them may change without them (an ``http:`` or a custom check)."""
    pending = list(rules.values())
    while pending:
        check = pending.pop()
        if type(check) not in _PURE:
            return None
        pending.extend(getattr(check, 'rules', ()))
        if isinstance(check, _checks.NotCheck):
            pending.append(check.rule)
    return {}
