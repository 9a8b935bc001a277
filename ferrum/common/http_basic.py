# SPDX-License-Identifier: Apache-2.0
"""HTTP Basic authentication against an htpasswd file of bcrypt hashes.

Used by the REST API (:mod:`ferrum.api.auth`) and by the conductors'
JSON-RPC endpoint (:mod:`ferrum.rpc.server`). Users and bcrypt hashes come
from an Apache htpasswd file (``htpasswd -nbB user password`` makes a
line). The file is re-read whenever it changes on disk, so users can be
added or removed without a restart.

A bcrypt check deliberately costs 100 ms or more, so successful checks
are remembered, in memory only, under a SHA-256 of user, password and the
user's hash: a client's repeated requests are cheap, and a changed hash no
longer matches. Failed checks are not remembered. Neither passwords, nor
hashes, nor the Authorization header are ever logged.
"""

import base64
import collections
import hashlib
import logging
import os
import re
import threading

import bcrypt

from ferrum.common import exception
from ferrum.common import plural

LOG = logging.getLogger(__name__)

#: Verified (user, password, hash) digests kept; a few per API client.
CACHE_SIZE = 1024
_BCRYPT_PREFIXES = ('$2y$', '$2b$', '$2a$')
_BCRYPT_HASH = re.compile(r'\$2[aby]\$[0-9]{2}\$[./A-Za-z0-9]{53}')
#: bcrypt only ever uses the first 72 bytes of a password; htpasswd and
#: older bcrypt libraries truncate silently, bcrypt >= 5 refuses instead.
_BCRYPT_MAX_PASSWORD = 72


class UserFileInvalid(exception.FerrumException):
    msg_fmt = ('Cannot use the HTTP Basic users file %(path)s (set by '
               '%(option)s): %(reason)s')


class Unauthorized(exception.FerrumException):
    msg_fmt = '%(reason)s'
    code = 401


def _parse(path: str, option: str) -> dict[str, bytes]:
    """The users and hashes of the htpasswd file at ``path``.

    :raises UserFileInvalid: the file is missing, unreadable, or a line is
        malformed or not bcrypt. The message names the line, never the hash.
    """
    try:
        with open(path, encoding='utf-8') as source:
            lines = source.read().splitlines()
    except FileNotFoundError:
        raise UserFileInvalid(path=path, option=option,
                              reason='it does not exist.') from None
    except OSError as exc:
        raise UserFileInvalid(path=path, option=option,
                              reason='it cannot be read: %s.'
                              % exc.strerror) from exc
    except UnicodeDecodeError:
        raise UserFileInvalid(path=path, option=option,
                              reason='it is not UTF-8 text.') from None
    users: dict[str, bytes] = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        user, colon, hashed = line.partition(':')
        if not colon or not user:
            reason = 'line %d is not of the form "user:bcrypt-hash".' % number
        elif not hashed.startswith(_BCRYPT_PREFIXES):
            reason = ('line %d (user "%s") is not a bcrypt hash; only bcrypt '
                      'is supported, make one with "htpasswd -nbB".'
                      % (number, user))
        elif not _BCRYPT_HASH.fullmatch(hashed):
            reason = ('line %d (user "%s") is a truncated or malformed '
                      'bcrypt hash.' % (number, user))
        elif user in users:
            reason = 'line %d repeats user "%s".' % (number, user)
        else:
            users[user] = hashed.encode('ascii')
            continue
        raise UserFileInvalid(path=path, option=option, reason=reason)
    return users


def _stamp(path: str) -> tuple[int, int, int] | None:
    # Inode and size as well as mtime: an edit within the file system's
    # timestamp granularity, or a file replaced by rename, still shows.
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size, stat.st_ino


class UserFile:
    """The htpasswd file's users, re-read when the file changes on disk."""

    def __init__(self, path: str, option: str) -> None:
        """Read the file.

        :param option: the option that names the file, for messages.
        :raises UserFileInvalid: see :func:`_parse`.
        """
        self.path = path
        self.option = option
        self._lock = threading.Lock()
        self._stamp = _stamp(path)
        self._users = _parse(path, option)
        self._error: UserFileInvalid | None = None
        if not self._users:
            LOG.warning('The HTTP Basic users file %s has no users: every '
                        'API request but version discovery gets 401', path)

    def users(self) -> dict[str, bytes]:
        """The current users and their hashes.

        :raises UserFileInvalid: the file changed and is now unusable.
        """
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    self._reload(stamp)
        if self._error is not None:
            raise self._error
        return self._users

    def _reload(self, stamp: tuple[int, int, int] | None) -> None:
        # The stamp is taken before the read: a change during the read
        # shows up as a new stamp on the next request.
        self._stamp = stamp
        try:
            self._users = _parse(self.path, self.option)
        except UserFileInvalid as exc:
            # Fail closed: a half-edited file must not keep removed users in.
            self._users, self._error = {}, exc
            LOG.error('API requests are refused until this is fixed: %s', exc)
            return
        self._error = None
        LOG.info('Re-read the HTTP Basic users file %s: %s',
                 self.path, plural.count(len(self._users), 'user'))


class VerifiedCache:
    """Digests of (user, password, hash) triples bcrypt has accepted."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._digests: collections.OrderedDict[bytes, None] = (
            collections.OrderedDict())

    @staticmethod
    def _digest(user: str, password: bytes, hashed: bytes) -> bytes:
        digest = hashlib.sha256()
        for part in (user.encode('utf-8'), password, hashed):
            # Length prefixes keep ("ab", "c") and ("a", "bc") apart.
            digest.update(len(part).to_bytes(8, 'big'))
            digest.update(part)
        return digest.digest()

    def check(self, user: str, password: bytes, hashed: bytes) -> bool:
        """Whether ``password`` matches ``hashed``, via bcrypt if unseen."""
        key = self._digest(user, password, hashed)
        with self._lock:
            if key in self._digests:
                self._digests.move_to_end(key)
                return True
        if not bcrypt.checkpw(password[:_BCRYPT_MAX_PASSWORD], hashed):
            return False
        with self._lock:
            self._digests[key] = None
            while len(self._digests) > self._size:
                self._digests.popitem(last=False)
        return True


def _credentials(header: str | None) -> tuple[str, bytes]:
    """User and password of an ``Authorization: Basic`` header value."""
    if not header:
        raise Unauthorized(reason='Authorization required.')
    scheme, _space, token = header.strip().partition(' ')
    if scheme.lower() != 'basic':
        raise Unauthorized(reason='Unsupported authorization type "%s"; use '
                                  'Basic.' % scheme)
    try:
        decoded = base64.b64decode(token.strip(), validate=True)
        user_bytes, colon, password = decoded.partition(b':')
        user = user_bytes.decode('utf-8')
    except ValueError:
        # Bad base64 (binascii.Error), non-ASCII token, non-UTF-8 user.
        colon = b''
    if not colon:
        raise Unauthorized(reason='Could not decode the Basic authorization '
                                  'token.')
    return user, password


class BasicAuth:
    """The ``http_basic`` check, run before every non-public request."""

    def __init__(self, path: str,
                 option: str = '[DEFAULT] http_basic_auth_user_file') -> None:
        """
        :param option: the option that names the file, for messages.
        :raises UserFileInvalid: see :func:`_parse`.
        """
        self.user_file = UserFile(path, option)
        self.cache = VerifiedCache()

    def authenticate(self, header: str | None) -> str:
        """The user the ``Authorization`` header value proves to be.

        :raises Unauthorized: no, malformed or wrong credentials.
        :raises UserFileInvalid: the users file is unusable now.
        """
        user, password = _credentials(header)
        users = self.user_file.users()
        hashed = users.get(user)
        if hashed is None:
            # Spend as long on an unknown user as on a known one, so that
            # response times do not tell which user names exist.
            if users:
                self.cache.check(user, password, next(iter(users.values())))
            LOG.info('API request for unknown user %r refused', user)
            raise Unauthorized(reason='Incorrect username or password.')
        if not self.cache.check(user, password, hashed):
            LOG.info('API request with a wrong password for user %r refused',
                     user)
            raise Unauthorized(reason='Incorrect username or password.')
        return user
