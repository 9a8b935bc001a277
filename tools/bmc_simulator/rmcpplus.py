# SPDX-License-Identifier: Apache-2.0
"""RMCP+ session set-up for the simulated BMCs: cipher suites 3 and 17.

pyghmi's server session answers every Open Session Request with cipher
suite 3 whatever the client proposed, and hashes RAKP with SHA-1 only, so
``ipmitool -C 17`` (and ipmitool's own choice on a BMC advertising 17)
fails. :class:`Session` reads the proposed algorithms, refuses what it
cannot do with RMCP+ status 0x11 (the client fails at once instead of
waiting out its timeout), and runs RAKP, the key derivation and packet
integrity with the negotiated hash (IPMI v2.0 sections 13.17-13.32):

======  ================  ===================  ===============
suite   authentication    integrity            confidentiality
======  ================  ===================  ===============
3       RAKP-HMAC-SHA1    HMAC-SHA1-96         AES-CBC-128
17      RAKP-HMAC-SHA256  HMAC-SHA256-128      AES-CBC-128
======  ================  ===================  ===============

pyghmi's session code does the rest: it signs and checks packets with
``currhashlib`` truncated to ``currhashlen`` bytes, and encrypts with
``aeskey``.
"""

import dataclasses
import hashlib
import hmac
import os
import struct
from typing import Any, Callable

import pyghmi.ipmi.private.constants as constants
import pyghmi.ipmi.private.serversession as serversession
import pyghmi.ipmi.private.session as ipmisession

# RMCP+ status codes (IPMI v2.0 table 13-15).
_UNAUTHORIZED_NAME = 0x0d
_INVALID_ICV = 0x0f
_NO_CIPHER_SUITE_MATCH = 0x11


@dataclasses.dataclass(frozen=True)
class CipherSuite:
    """One cipher suite: its algorithm numbers and the hash behind them."""

    number: int
    authentication: int   # table 13-17
    integrity: int        # table 13-18
    confidentiality: int  # table 13-19
    hash: Callable[..., Any]
    icv_length: int       # bytes of the HMAC kept as integrity check value

    def record(self) -> bytes:
        """This suite in a Get Channel Cipher Suites answer (table 22-19):
        a standard record, then the three algorithms tagged by kind."""
        return bytes([0xc0, self.number, self.authentication,
                      0x40 | self.integrity, 0x80 | self.confidentiality])


SUITES = (CipherSuite(3, 1, 1, 1, hashlib.sha1, 12),
          CipherSuite(17, 3, 4, 1, hashlib.sha256, 16))
_BY_ALGORITHMS = {(s.authentication, s.integrity, s.confidentiality): s
                  for s in SUITES}
# Get Channel Cipher Suites pages its answer 16 record bytes at a time.
_RECORDS = b''.join(suite.record() for suite in SUITES)
_PAGE = 16


def _checksum(data: bytes) -> int:
    return -sum(data) & 0xff


def cipher_suites_data(list_index: int) -> bytes:
    """Get Channel Cipher Suites response data after the completion code:
    the channel, then page ``list_index`` of the suite records."""
    page = list_index & 0x3f
    return bytes([1]) + _RECORDS[page * _PAGE:(page + 1) * _PAGE]


def cipher_suites_packet(myaddr: int, mylun: int, clientaddr: int,
                         clientlun: int, clientseq: int,
                         request: bytes) -> bytes:
    """The sessionless answer to Get Channel Cipher Suites.

    :param request: the IPMI message as pyghmi hands it to
        ``send_cipher_suites``: request data from byte 20 (channel,
        payload type, list index).
    """
    data = bytes([0]) + cipher_suites_data(
        request[22] if len(request) > 22 else 0)
    head = bytes([clientaddr, clientlun | (7 << 2)])  # netfn: app response
    body = bytes([myaddr, mylun | (clientseq << 2), 0x54]) + data
    message = (head + bytes([_checksum(head)])
               + body + bytes([_checksum(body)]))
    # RMCP, then an unauthenticated IPMI 2.0 session header (session 0).
    return (b'\x06\x00\xff\x07\x06\x00' + bytes(8)
            + struct.pack('<H', len(message)) + message)


class Session(serversession.ServerSession):
    """One client's RMCP+ session, negotiating cipher suite 3 or 17.

    The owning BMC's ``session_established(suite_number)`` is called once
    RAKP succeeds, so tests can tell which suite a client really used.
    """

    suite: CipherSuite | None = None

    def __init__(self, authdata: Any, kg: bytes | None,
                 clientaddr: Any, netsocket: Any, request: bytes,
                 uuid: Any, bmc: Any) -> None:
        # pyghmi's constructor registers the session, then answers the
        # request through create_open_session_response below.
        super().__init__(authdata, kg, clientaddr, netsocket, request, uuid,
                         bmc)
        if self.suite is None:
            # Refused: route nothing more from this client to it.
            handlers = ipmisession.Session.bmc_handlers.get(clientaddr, {})
            if handlers.get(bmc.port) is self:
                del handlers[bmc.port]
                if not handlers:
                    del ipmisession.Session.bmc_handlers[clientaddr]

    def create_open_session_response(self, request: bytearray) -> bytearray:
        tag = request[0]
        self.clientsessionid = request[4:8]
        self.managedsessionid = os.urandom(4)
        self.privlevel = 4
        # Algorithm numbers sit in byte 4 of each 8-byte payload (table
        # 13-9); ipmitool and pyghmi always propose exactly one of each.
        proposed = (tuple(request[at] & 0x3f for at in (12, 20, 28))
                    if len(request) >= 32 else ())
        self.suite = _BY_ALGORITHMS.get(proposed)
        if self.suite is None:
            return (bytearray([tag, _NO_CIPHER_SUITE_MATCH, 0, 0])
                    + self.clientsessionid)
        self.currhashlib = self.suite.hash
        self.currhashlen = self.suite.icv_length
        algorithms = bytearray()
        for kind, number in enumerate((self.suite.authentication,
                                       self.suite.integrity,
                                       self.suite.confidentiality)):
            algorithms += bytes([kind, 0, 0, 8, number, 0, 0, 0])
        return (bytearray([tag, 0, self.privlevel, 0]) + self.clientsessionid
                + self.managedsessionid + algorithms)

    def _hmac(self, key: bytes, data: bytes) -> bytes:
        assert self.suite is not None
        return hmac.new(key, bytes(data), self.suite.hash).digest()

    def _got_rakp1(self, data: bytearray) -> None:
        if self.suite is None or len(data) < 28:
            return
        tag = data[0]
        self.Rm = bytes(data[8:24])
        self.rolem = data[24]
        self.maxpriv = self.rolem & 0b111
        self.username = bytes(data[28:28 + data[27]])
        password = self.authdata.get(self.username.decode('utf-8', 'replace'))
        if password is None:
            # Stock pyghmi stays silent and the client waits out its whole
            # timeout; a real BMC answers "unauthorized name" at once.
            self._send_rakp(constants.payload_types['rakp2'], tag,
                            _UNAUTHORIZED_NAME)
            return
        self.kuid = password.encode('utf-8')
        if self.kg is None:
            self.kg = self.kuid
        self.uuiddata = self.uuid.bytes
        self.Rc = os.urandom(16)
        signed = (self.clientsessionid + self.managedsessionid + self.Rm
                  + self.Rc + self.uuiddata
                  + bytes([self.rolem, len(self.username)]) + self.username)
        authcode = self._hmac(self.kuid, signed)
        self._send_rakp(constants.payload_types['rakp2'], tag, 0,
                        self.Rc + self.uuiddata + authcode)

    def _got_rakp3(self, data: bytearray) -> None:
        if self.suite is None or not hasattr(self, 'Rc') or data[1] != 0:
            return  # no RAKP2 sent, or the client refused it
        tag = data[0]
        role_and_name = bytes([self.rolem, len(self.username)]) + self.username
        expected = self._hmac(self.kuid, self.Rc + self.clientsessionid
                              + role_and_name)
        if not hmac.compare_digest(expected, bytes(data[8:])):
            self._send_rakp(constants.payload_types['rakp4'], tag,
                            _INVALID_ICV)
            return
        self.sik = self._hmac(self.kg, self.Rm + self.Rc + role_and_name)
        self.k1 = self._hmac(self.sik, b'\x01' * 20)
        self.k2 = self._hmac(self.sik, b'\x02' * 20)
        self.aeskey = self.k2[:16]
        self.localsid = struct.unpack('<I', self.managedsessionid)[0]
        self.ipmicallback = self.handle_client_request
        icv = self._hmac(self.sik, self.Rm + self.managedsessionid
                         + self.uuiddata)[:self.suite.icv_length]
        self._send_rakp(constants.payload_types['rakp4'], tag, 0, icv)
        # Every packet from here on is signed and encrypted.
        self.confalgo = 'aes'
        self.integrityalgo = self.suite.hash().name
        self.sequencenumber = 1
        self.sessionid = struct.unpack('<I', bytes(self.clientsessionid))[0]
        established = getattr(self.bmc, 'session_established', None)
        if established is not None:
            established(self.suite.number)

    def _send_rakp(self, payload_type: int, tag: int, status: int,
                   rest: bytes = b'') -> None:
        self.send_payload(bytearray([tag, status, 0, 0]) + self.clientsessionid
                          + rest, payload_type, retry=False)
