#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Record a run's ``/metrics`` and draw etc/grafana/ferrum.json's panels
from it, where no Grafana or Prometheus is at hand (doc/observability.md).

Two steps::

    # scrape a running ferrum every 2 s for 5 minutes
    python tools/render_dashboard.py record --url http://127.0.0.1:6385 \\
        --seconds 300 --out scrapes.jsonl
    # draw the dashboard's panels (needs matplotlib, which ferrum does not)
    python tools/render_dashboard.py render --scrapes scrapes.jsonl \\
        --out doc/observability-dashboard.png

``record`` parses each scrape with prometheus_client's parser and writes
one JSON line per scrape: its time and every sample. ``render`` reads the
panels' PromQL from the dashboard file and evaluates it over the recorded
scrapes with the small subset of PromQL the dashboard uses: selectors with
``=``, ``!=`` and ``=~`` matchers, ``rate(...[w])`` (the increase over the
window divided by its length, without Prometheus's extrapolation to the
window's edges), ``sum``/``sum by``, ``topk`` and ``histogram_quantile``
(Prometheus's linear interpolation within a bucket). It draws them in a
grid with matplotlib: a picture of what Grafana would show, not Grafana.
"""

import argparse
import dataclasses
import json
import math
import re
import sys
import time
from collections.abc import Callable
from typing import Any

Labels = frozenset[tuple[str, str]]
Vector = dict[Labels, float]

#: The panels drawn by default: the dashboard's main ones.
MAIN_PANELS = (
    'Nodes by provision state', 'Allocations by state', 'Leases by status',
    'Placement sync backlog', 'API requests per second by route',
    'API p95 latency by route', 'Periodic task p95 duration',
    'Driver call errors per second')


# ---- record ------------------------------------------------------------

def record(url: str, seconds: float, interval: float, out: str,
           token: str | None) -> int:
    import requests
    from prometheus_client import parser

    headers = {'X-Auth-Token': token} if token else {}
    deadline = time.monotonic() + seconds
    count = 0
    with open(out, 'a') as sink, requests.Session() as session:
        while time.monotonic() < deadline:
            started = time.monotonic()
            text = session.get(url.rstrip('/') + '/metrics', headers=headers,
                               timeout=30).text
            samples = [[s.name, s.labels, s.value]
                       for family in parser.text_string_to_metric_families(
                           text) for s in family.samples]
            sink.write(json.dumps({'t': time.time(),
                                   'samples': samples}) + '\n')
            sink.flush()
            count += 1
            time.sleep(max(0.0, interval - (time.monotonic() - started)))
    print(json.dumps({'scrapes': count, 'out': out}))
    return 0


# ---- a PromQL subset ----------------------------------------------------

@dataclasses.dataclass
class Scrapes:
    times: list[float]
    #: per scrape: name -> {labels: value}
    samples: list[dict[str, Vector]]

    @classmethod
    def load(cls, path: str) -> 'Scrapes':
        times, samples = [], []
        with open(path) as source:
            for line in source:
                scrape = json.loads(line)
                by_name: dict[str, Vector] = {}
                for name, labels, value in scrape['samples']:
                    by_name.setdefault(name, {})[
                        frozenset(labels.items())] = value
                times.append(scrape['t'])
                samples.append(by_name)
        return cls(times, samples)


_TOKEN = re.compile(r'\s*(?:(?P<num>\d+(?:\.\d+)?)(?![\w])|(?P<name>[A-Za-z_]'
                    r'[\w:]*)|(?P<str>"(?:[^"\\]|\\.)*")|(?P<dur>\[\d+[smh]\])'
                    r'|(?P<op>=~|!=|[(){},=]))')
_UNITS = {'s': 1, 'm': 60, 'h': 3600}

Eval = Callable[[Scrapes, int], Vector]


class Parser:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        position = 0
        text = text.strip()
        while position < len(text):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                raise ValueError('cannot parse %r at %d' % (text, position))
            kind = match.lastgroup or ''
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.at = 0

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.tokens[self.at]
        if value is not None and token[1] != value:
            raise ValueError('expected %r, found %r' % (value, token[1]))
        self.at += 1
        return token

    def peek(self) -> str:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else ''

    def expr(self) -> Eval:
        kind, word = self.take()
        if word in ('histogram_quantile', 'topk'):
            # f(number, expression)
            self.take('(')
            number = float(self.take()[1])
            self.take(',')
            inner = self.expr()
            self.take(')')
            if word == 'topk':
                return lambda s, i: dict(sorted(
                    inner(s, i).items(), key=lambda kv: -kv[1])[
                        :int(number)])
            return lambda s, i: _quantile(number, inner(s, i))
        if word == 'sum':
            by: list[str] | None = None
            if self.peek() == 'by':
                self.take()
                by = self._names()
            self.take('(')
            inner = self.expr()
            self.take(')')
            return lambda s, i: _sum(inner(s, i), by)
        if word == 'rate':
            self.take('(')
            name, matchers = self._selector()
            window = self.take()[1]
            seconds = int(window[1:-2]) * _UNITS[window[-2]]
            self.take(')')
            return lambda s, i: _rate(s, i, name, matchers, seconds)
        if kind != 'name':
            raise ValueError('unexpected %r' % word)
        self.at -= 1
        name, matchers = self._selector()
        return lambda s, i: _select(s.samples[i].get(name, {}), matchers)

    def _names(self) -> list[str]:
        self.take('(')
        names = []
        while self.peek() != ')':
            names.append(self.take()[1])
            if self.peek() == ',':
                self.take()
        self.take(')')
        return names

    def _selector(self) -> tuple[str, list[tuple[str, str, str]]]:
        name = self.take()[1]
        matchers = []
        if self.peek() == '{':
            self.take()
            while self.peek() != '}':
                label = self.take()[1]
                op = self.take()[1]
                value = json.loads(self.take()[1])
                matchers.append((label, op, value))
                if self.peek() == ',':
                    self.take()
            self.take('}')
        return name, matchers


def _matches(labels: Labels, matchers: list[tuple[str, str, str]]) -> bool:
    found = dict(labels)
    for label, op, value in matchers:
        have = found.get(label, '')
        if op == '=' and have != value or op == '!=' and have == value:
            return False
        if op == '=~' and not re.fullmatch(value, have):
            return False
    return True


def _select(series: Vector, matchers: list[tuple[str, str, str]]) -> Vector:
    return {k: v for k, v in series.items() if _matches(k, matchers)}


def _rate(scrapes: Scrapes, i: int, name: str,
          matchers: list[tuple[str, str, str]], seconds: int) -> Vector:
    now = scrapes.times[i]
    first = next(j for j in range(i + 1)
                 if scrapes.times[j] >= now - seconds)
    if first == i:
        return {}
    span = now - scrapes.times[first]
    before = scrapes.samples[first].get(name, {})
    return {k: max(0.0, v - before.get(k, 0.0)) / span
            for k, v in _select(scrapes.samples[i].get(name, {}),
                                matchers).items()}


def _sum(vector: Vector, by: list[str] | None) -> Vector:
    out: Vector = {}
    for labels, value in vector.items():
        key = frozenset((k, v) for k, v in labels if by and k in by)
        out[key] = out.get(key, 0.0) + value
    return out


def _quantile(q: float, buckets: Vector) -> Vector:
    groups: dict[Labels, list[tuple[float, float]]] = {}
    for labels, value in buckets.items():
        le = dict(labels)['le']
        key = frozenset((k, v) for k, v in labels if k != 'le')
        groups.setdefault(key, []).append((float(le), value))
    out: Vector = {}
    for key, found in groups.items():
        found.sort()
        total = found[-1][1]
        if total <= 0:
            continue
        rank = q * total
        lower, below = 0.0, 0.0
        for bound, count in found:
            if count >= rank:
                if math.isinf(bound):
                    out[key] = lower
                else:
                    out[key] = lower + (bound - lower) * (
                        (rank - below) / max(count - below, 1e-12))
                break
            lower, below = bound, count
    return out


# ---- render -------------------------------------------------------------

def _legend(template: str, labels: Labels) -> str:
    found = dict(labels)
    return re.sub(r'\{\{(\w+)\}\}', lambda m: found.get(m.group(1), ''),
                  template) or '(all)'


def render(dashboard: str, path: str, out: str, titles: list[str]) -> int:
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot

    with open(dashboard) as source:
        panels = {p['title']: p for p in json.load(source)['panels']}
    scrapes = Scrapes.load(path)
    start = scrapes.times[0]
    minutes = [(t - start) / 60 for t in scrapes.times]
    pyplot.style.use('dark_background')
    columns = 2
    rows = (len(titles) + columns - 1) // columns
    figure, axes = pyplot.subplots(rows, columns, figsize=(16, 4 * rows),
                                   facecolor='#111217')
    for ax, title in zip(axes.flat, titles, strict=False):
        panel = panels[title]
        ax.set_facecolor('#181b1f')
        for target in panel['targets']:
            evaluate = Parser(target['expr']).expr()
            series: dict[str, list[float]] = {}
            for i in range(len(scrapes.times)):
                for labels, value in evaluate(scrapes, i).items():
                    name = _legend(target['legendFormat'], labels)
                    series.setdefault(name, [math.nan] * len(
                        scrapes.times))[i] = value
            for name, values in sorted(series.items()):
                ax.plot(minutes, values, linewidth=1.6, label=name)
        unit = panel['fieldConfig']['defaults'].get('unit', '')
        ax.set_title(title, loc='left', fontsize=11, color='#d8d9da')
        ax.set_xlabel('minutes into the run', fontsize=8, color='#8e8e8e')
        if unit not in ('', 'short'):
            ax.set_ylabel(unit, fontsize=8, color='#8e8e8e')
        ax.grid(color='#2c3235', linewidth=0.6)
        ax.tick_params(labelsize=8, colors='#8e8e8e')
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc='upper left', framealpha=0.3,
                      ncol=2)
    for ax in list(axes.flat)[len(titles):]:
        ax.set_visible(False)
    figure.suptitle('ferrum (etc/grafana/ferrum.json), drawn by '
                    'tools/render_dashboard.py from %d scrapes of a real '
                    'run' % len(scrapes.times), color='#d8d9da', fontsize=12)
    figure.tight_layout(rect=(0, 0, 1, 0.97))
    figure.savefig(out, dpi=80, facecolor=figure.get_facecolor())
    print(json.dumps({'out': out, 'panels': len(titles),
                      'scrapes': len(scrapes.times)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest='command', required=True)
    rec = commands.add_parser('record', help='scrape /metrics repeatedly')
    rec.add_argument('--url', default='http://127.0.0.1:6385')
    rec.add_argument('--seconds', type=float, default=300)
    rec.add_argument('--interval', type=float, default=2.0)
    rec.add_argument('--token', help='X-Auth-Token under keystone')
    rec.add_argument('--out', required=True)
    ren = commands.add_parser('render', help='draw the panels')
    ren.add_argument('--dashboard', default='etc/grafana/ferrum.json')
    ren.add_argument('--scrapes', required=True)
    ren.add_argument('--out', default='doc/observability-dashboard.png')
    ren.add_argument('--panel', action='append',
                     help='a panel title (repeat); default: the main ones')
    args: Any = parser.parse_args(argv)
    if args.command == 'record':
        return record(args.url, args.seconds, args.interval, args.out,
                      args.token)
    return render(args.dashboard, args.scrapes, args.out,
                  args.panel or list(MAIN_PANELS))


if __name__ == '__main__':
    sys.exit(main())
