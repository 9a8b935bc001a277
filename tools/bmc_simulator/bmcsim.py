#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Simulated IPMI 2.0 BMCs on loopback UDP ports, for tests, benchmarks and
demos. One process serves any number of BMCs; pyghmi's server side does the
RMCP+ protocol (rmcpplus.py adds cipher suite 17 to it), this module the
machine behind it. See README.md.

    bmcsim.py --bmc 6230:admin:secret --count 4 --state-dir /tmp/bmcs

prints ``READY <port> ...`` once every socket is bound.
"""

import argparse
import json
import os
import signal
import sys
import time
import traceback
import uuid

import pyghmi.ipmi.bmc as bmc
import pyghmi.ipmi.private.session as ipmisession
import rmcpplus  # beside this script, which is run by path

#: pyghmi device names <-> IPMI boot flag device selectors (bits 5..2).
_SELECTORS = {'default': 0, 'pxe': 1, 'disk': 2, 'safe': 3, 'cdrom': 5,
              'bios': 6, 'floppy': 15}
_NAMES = {code: name for name, code in _SELECTORS.items()}
_OEM_NETFN = 0x30
_CHASSIS_NETFN = 0x00
_GET_CIPHER_SUITES = (0x06, 0x54)
_BUSY, _NOT_IN_STATE = 0xc0, 0xd5


class SimBmc(bmc.Bmc):
    """One simulated machine: power, boot flags, faults, a state file."""

    def __init__(self, user: str, password: str, port: int,
                 address: str, power_delay: float,
                 state_dir: str | None) -> None:
        super().__init__({user: password}, port=port, address=address)
        # pyghmi keys sessions by port: use the real one when 0 was asked.
        self.port = self.serversocket.getsockname()[1]
        self.uuid = uuid.uuid4()
        self.default_delay = power_delay
        self.state_dir = state_dir
        self.reset_state()

    # ---- state -------------------------------------------------------------

    def reset_state(self) -> None:
        self.power = 'off'
        self.reported_power = 'off'
        self.power_changed_at = 0.0
        self.boot_device = 'default'
        self.persistent = False
        self.efi = False
        self.busy = 0
        self.muted_until = 0.0
        self.power_delay = self.default_delay
        self.log: list[str] = []
        self.cipher_suites: list[int] = []  # of the sessions since reset
        self.dump()

    def state(self) -> dict:
        return {'port': self.port, 'power': self.power,
                'boot_device': self.boot_device,
                'persistent': self.persistent, 'efi': self.efi,
                'busy': self.busy, 'power_delay': self.power_delay,
                'muted': self.muted_until > time.monotonic(),
                'cipher_suites': list(self.cipher_suites),
                'log': self.log[-50:]}

    def dump(self) -> None:
        if not self.state_dir:
            return
        path = os.path.join(self.state_dir, '%d.json' % self.port)
        with open(path + '.tmp', 'w') as out:
            json.dump(self.state(), out)
        os.replace(path + '.tmp', path)

    def record(self, what: str) -> None:
        self.log.append(what)
        del self.log[:-50]
        self.dump()

    # ---- power -------------------------------------------------------------

    def get_power_state(self) -> str:
        if time.monotonic() - self.power_changed_at >= self.power_delay:
            self.reported_power = self.power
        return self.reported_power

    def _set_power(self, state: str, what: str) -> None:
        if self.power == 'off' and state == 'on' and not self.persistent:
            self._consume_boot_device()
        self.get_power_state()  # the old state stays visible for the delay
        self.power = state
        self.power_changed_at = time.monotonic()
        self.record(what)

    def _consume_boot_device(self) -> None:
        self.boot_device, self.efi = 'default', False

    def power_on(self) -> None:
        self._set_power('on', 'power on')

    def power_off(self) -> None:
        self._set_power('off', 'power off')

    def power_shutdown(self) -> None:
        self._set_power('off', 'power soft')

    def _restart(self, what: str) -> int | None:
        if self.power == 'off':
            return _NOT_IN_STATE  # as many real BMCs answer
        if not self.persistent:
            self._consume_boot_device()
        self.record(what)
        return None

    def power_reset(self) -> int | None:
        return self._restart('power reset')

    def power_cycle(self) -> int | None:
        return self._restart('power cycle')

    def pulse_diag(self) -> None:
        self.record('power diag')

    def get_system_guid(self) -> uuid.UUID:
        return self.uuid

    def cold_reset(self) -> int:
        self.record('mc reset cold')
        return 0

    # ---- boot flags (pyghmi drops the persistent and EFI bits) ----------

    def get_system_boot_options(self, request: dict, session) -> None:
        if request['data'][0] != 5:
            return super().get_system_boot_options(request, session)
        selector = _SELECTORS[self.boot_device]
        flags = ((0x80 if selector else 0) | (0x40 if self.persistent else 0)
                 | (0x20 if self.efi else 0))
        session.send_ipmi_response(data=[1, 5, flags, selector << 2, 0, 0, 0])

    def set_system_boot_options(self, request: dict, session) -> None:
        data = request['data']
        if data[0] != 5:
            return super().set_system_boot_options(request, session)
        name = _NAMES.get((data[2] >> 2) & 0x0f)
        if name is None or len(data) < 3:
            return session.send_ipmi_response(code=0xcc)
        self.boot_device = name if data[1] & 0x80 else 'default'
        self.persistent = bool(data[1] & 0x40)
        self.efi = bool(data[1] & 0x20)
        self.record('bootdev %s%s%s' % (name, ' persistent' * self.persistent,
                                        ' efi' * self.efi))
        session.send_ipmi_response()

    # ---- sessions: cipher suites 3 and 17 ----------------------------------

    def send_cipher_suites(self, myaddr: int, mylun: int, clientaddr: int,
                           clientlun: int, clientseq: int, data: bytes,
                           sockaddr) -> None:
        packet = rmcpplus.cipher_suites_packet(myaddr, mylun, clientaddr,
                                               clientlun, clientseq, data)
        ipmisession._io_sendto(self.serversocket, packet, sockaddr)

    def session_established(self, suite: int) -> None:
        # Only a new suite is worth a state file write: one per session
        # cost every login about a fifth more simulator CPU (measured).
        if suite not in self.cipher_suites:
            self.cipher_suites.append(suite)
            self.cipher_suites.sort()
            self.dump()

    # ---- faults and test hooks ---------------------------------------------

    def sessionless_data(self, data: bytes, sockaddr) -> None:
        if self.muted_until > time.monotonic():
            return
        raw = bytearray(data)
        if (len(raw) >= 22 and raw[0] == 6 and raw[2:4] == b'\xff\x07'
                and raw[4] == 6 and raw[5] == 16):
            # An Open Session Request: stock pyghmi hard-codes its own
            # session class here, which only knows cipher suite 3.
            rmcpplus.Session(self.authdata, self.kg, sockaddr,
                             self.serversocket, raw[16:], self.uuid, bmc=self)
            return
        super().sessionless_data(data, sockaddr)

    def handle_raw_request(self, request: dict, session) -> None:
        if self.muted_until > time.monotonic():
            return  # no answer at all: the BMC looks gone
        netfn, command = request['netfn'], request['command']
        if netfn == _OEM_NETFN:
            return self._oem(command, list(request['data']), session)
        if (netfn, command) == _GET_CIPHER_SUITES:  # `channel getciphers`
            data = request['data']
            return session.send_ipmi_response(data=list(
                rmcpplus.cipher_suites_data(data[2] if len(data) > 2 else 0)))
        if netfn == _CHASSIS_NETFN and self.busy > 0:
            self.busy -= 1
            self.record('busy')
            return session.send_ipmi_response(code=_BUSY)
        return super().handle_raw_request(request, session)

    def _oem(self, command: int, data: list, session) -> None:
        argument = data[0] if data else 0
        if command == 0x01:
            self.reset_state()
        elif command == 0x02:
            self.busy = argument
            self.dump()
        elif command == 0x03:
            self.muted_until = time.monotonic() + argument
            self.dump()
        elif command == 0x04:
            self.power_delay = float(argument)
            self.dump()
        else:
            return session.send_ipmi_response(code=0xc1)
        session.send_ipmi_response()


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--bmc', action='append', default=[],
                        metavar='PORT:USER:PASSWORD',
                        help='one BMC; port 0 picks a free one')
    parser.add_argument('--count', type=int, default=0,
                        help='this many more BMCs on free ports')
    parser.add_argument('--user', default='admin')
    parser.add_argument('--password', default='password')
    parser.add_argument('--address', default='127.0.0.1')
    parser.add_argument('--power-delay', type=float, default=0.0,
                        help='seconds a power change takes to show')
    parser.add_argument('--state-dir',
                        help='write <port>.json here after each change')
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _parse_args(argv)
    specs = []
    for spec in args.bmc:
        port, user, password = spec.split(':', 2)
        specs.append((int(port), user, password))
    specs += [(0, args.user, args.password)] * args.count
    if not specs:
        raise SystemExit('give at least one --bmc or a --count')
    if args.state_dir:
        os.makedirs(args.state_dir, exist_ok=True)
    bmcs = [SimBmc(user, password, port, args.address, args.power_delay,
                   args.state_dir) for port, user, password in specs]

    def dump_all(_signum: int, _frame: object) -> None:
        print(json.dumps([b.state() for b in bmcs]), flush=True)

    signal.signal(signal.SIGUSR1, dump_all)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.signal(signal.SIGINT, lambda *_: os._exit(0))
    print('READY %s' % ' '.join(str(b.port) for b in bmcs), flush=True)
    serve()
    return 0


def serve(stall: float = 1.0) -> None:
    """pyghmi's event loop (``Bmc.listen``), made to outlive one bad
    packet and to say when it stalled: a client that times out meanwhile
    looks like a silent BMC, and the log then tells which it was."""
    while True:
        started = time.monotonic()
        try:
            ipmisession.Session.wait_for_rsp(timeout=0.5)
        except Exception:  # one packet's failure; the others still served
            traceback.print_exc()
            time.sleep(0.01)  # a failure every pass must not spin
        took = time.monotonic() - started
        if took > stall:
            print('bmcsim: the event loop stalled %.1f s' % took,
                  file=sys.stderr, flush=True)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
