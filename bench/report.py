#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py [-o DIR] [--no-plot] LOG...: the benchmark table.

Reads the 'RESULT {json}' lines of twheel_bench.ko (kernel log) and of
ubench (userspace) from LOG files - the VM console log or the files the rig
extracts from it - and writes DIR/latest.json (every result, the targets and
their verdicts), DIR/latest.md (one table: a column per facility, a goal and
a verdict for each target of issue 5), DIR/cost.dat and, with gnuplot,
DIR/cost.png (bench/plot.gp). A missing result is reported as such; no
target is ever waived.

The environment line carries the host's load average, which the guest
cannot see: the one at report time, or --host-load as measured around the
run when the report is made again later.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

RESULT = re.compile(r'RESULT (\{.*\})\s*$')
# Fields that tell two results apart; a later duplicate replaces an earlier one.
KEY = ('kind', 'fac', 'n', 'range', 'case', 'what')
# Kernel facilities of the cost runs: twheel arms with TWHEEL_REL,
# twheel-abs the same timers with TWHEEL_ABS (see bench/twheel_bench.c).
KFACS = ('twheel', 'twheel-abs', 'timer_list', 'hrtimer')
# The lateness and burst runs: twheel arms at absolute deadlines there.
FIRE_FACS = ('twheel', 'timer_list', 'hrtimer')
# cost.dat column order, fixed for bench/plot.gp.
DAT_FACS = ('twheel', 'timer_list', 'hrtimer', 'twheel-abs')
COLS = ('twheel', 'twheel-abs', 'timer_list', 'hrtimer', 'timerfd',
        'POSIX timer')
HERE = os.path.dirname(os.path.abspath(__file__))


def merge(rounds):
    """One result from the rounds of a measurement: numeric fields are the
    median over the rounds, the others the last round's."""
    out = dict(rounds[-1])
    for k, v in out.items():
        vals = sorted(r[k] for r in rounds if isinstance(r.get(k), (int, float))
                      and not isinstance(r.get(k), bool))
        if len(rounds) > 1 and vals and k not in KEY:
            out[k] = vals[(len(vals) - 1) // 2] if len(vals) % 2 else \
                (vals[len(vals) // 2 - 1] + vals[len(vals) // 2]) / 2
    out.pop('round', None)
    if len(rounds) > 1:
        out['rounds'] = len(rounds)
    return out


def parse(paths):
    """RESULT lines by measurement; the same line seen twice (the console
    log repeats the guest's files) counts once."""
    found = {}
    for path in paths:
        with open(path, errors='replace') as f:
            for line in f:
                m = RESULT.search(line)
                if not m:
                    continue
                try:
                    r = json.loads(m.group(1))
                except ValueError:
                    print(f'report: bad line in {path}: {line.strip()}',
                          file=sys.stderr)
                    continue
                key = tuple(r.get(k) for k in KEY)
                found.setdefault(key, {})[r.get('round', 0)] = r
    return [merge([v[i] for i in sorted(v)]) for v in found.values()]


class Results:
    def __init__(self, results):
        self.all = results

    def get(self, kind, **match):
        for r in self.all:
            if r['kind'] == kind and all(r.get(k) == v for k, v in match.items()):
                return r
        return None

    def ns(self, kind, fac=None):
        return sorted({r['n'] for r in self.all if r['kind'] == kind and
                       (fac is None or r.get('fac') == fac)})

    def val(self, kind, field, **match):
        r = self.get(kind, **match)
        return None if r is None else r.get(field)


# ---- number formatting ----

def f_ns(v):
    return '-' if v is None else f'{v:,.0f} ns' if v >= 100 else f'{v:.1f} ns'


def f_time(v):
    if v is None:
        return '-'
    a = abs(v)
    if a >= 1e9:
        return f'{v / 1e9:.2f} s'
    if a >= 1e6:
        return f'{v / 1e6:.2f} ms'
    if a >= 1e3:
        return f'{v / 1e3:.0f} us'
    return f'{v:.0f} ns'


def f_rate(v):
    if v is None:
        return '-'
    if v >= 1e6:
        return f'{v / 1e6:.2f} M/s'
    if v >= 1e3:
        return f'{v / 1e3:.1f} k/s'
    return f'{v:.1f} /s'


def f_bytes(v):
    return '-' if v is None else f'{v:,.0f} B'


def f_n(n):
    for div, suf in ((1000000, 'M'), (1000, 'k')):
        if n >= div and n % div == 0:
            return f'{n // div}{suf}'
    return str(n)


def f_ratio(v):
    return '-' if v is None else f'{v:.2f}x'


# ---- the table ----

class Table:
    def __init__(self):
        self.rows = []
        self.targets = []

    def row(self, metric, cells, goal='', verdict=''):
        self.rows.append((metric, [cells.get(c, '') for c in COLS], goal,
                          verdict))

    def target(self, metric, cells, goal, value, ok, note=''):
        """A target row; ok is None when a result is missing."""
        verdict = 'no data' if ok is None else 'met' if ok else 'MISSED'
        self.targets.append({'target': metric, 'goal': goal, 'value': value,
                             'verdict': verdict, 'note': note})
        self.row(metric, cells, goal, f'**{verdict}**' if verdict != 'met'
                 else verdict)

    def markdown(self):
        head = ['Metric', *COLS, 'Goal', 'Result']
        out = ['| ' + ' | '.join(head) + ' |',
               '|' + '|'.join(['---'] + ['---:'] * len(COLS) +
                              ['---', '---']) + '|']
        for metric, cells, goal, verdict in self.rows:
            out.append('| ' + ' | '.join([metric, *cells, goal, verdict]) +
                       ' |')
        return '\n'.join(out) + '\n'


def ratio(a, b):
    return None if a is None or b is None or not b else a / b


def add_costs(t, res):
    for n in res.ns('cost'):
        for op, name in (('arm', 'arm'), ('mod', 'modify'),
                         ('cancel', 'cancel')):
            t.row(f'{name}, {f_n(n)} pending (ns/op)',
                  {f: f_ns(res.val('cost', op + '_ns', fac=f, n=n))
                   for f in KFACS})
    for r in res.all:
        if r['kind'] == 'skip' and r.get('what') == 'cost':
            t.row(f'{f_n(r["n"])} pending: skipped ({r.get("why")})',
                  {r.get('fac'): 'skipped'})
        elif r['kind'] == 'skip':
            t.row(f'{r.get("what")}: skipped ({r.get("why")})', {})


def arm_cancel(res, fac, n):
    a = res.val('cost', 'arm_ns', fac=fac, n=n)
    c = res.val('cost', 'cancel_ns', fac=fac, n=n)
    return None if a is None or c is None else a + c


def add_cost_targets(t, res):
    """The arm+cancel targets, for twheel armed with relative and with
    absolute deadlines alike, each with its own verdict."""
    ns = res.ns('cost', 'twheel')
    n = 1000000 if 1000000 in ns else (ns[-1] if ns else 1000000)
    cells = {f: f_ns(arm_cancel(res, f, n)) for f in KFACS}
    for other, limit in (('timer_list', 1.0), ('hrtimer', 0.3)):
        for fac, how in (('twheel', 'relative'), ('twheel-abs', 'absolute')):
            r = ratio(arm_cancel(res, fac, n), arm_cancel(res, other, n))
            t.target(f'arm+cancel, {f_n(n)} pending: twheel ({how}) / '
                     f'{other} = {f_ratio(r)}',
                     cells, f'<= {limit}x {other}', r,
                     None if r is None else r <= limit)


def add_bursts(t, res):
    for n in res.ns('burst'):
        t.row(f'burst of {f_n(n)} due at once: callbacks/s',
              {f: f_rate(res.val('burst', 'per_s', fac=f, n=n)) for f in FIRE_FACS})
        t.row(f'burst of {f_n(n)}: first callback late by',
              {f: f_time(res.val('burst', 'first_late_ns', fac=f, n=n))
               for f in FIRE_FACS})


def add_lateness(t, res, tick):
    for rng, desc in (('short', '1-50 ms'), ('long', '1-5 s')):
        for fld, name in (('p50_ns', 'p50'), ('max_ns', 'max')):
            t.row(f'lateness {desc}: {name}',
                  {f: f_time(res.val('lateness', fld, fac=f, range=rng))
                   for f in FIRE_FACS})
        cells = {f: f_time(res.val('lateness', 'p99_ns', fac=f, range=rng))
                 for f in FIRE_FACS}
        p99 = res.val('lateness', 'p99_ns', fac='twheel', range=rng)
        t.target(f'lateness {desc}: p99', cells, f'twheel <= 1 tick ({f_time(tick)})',
                 p99, None if p99 is None or tick is None else p99 <= tick)
        cells = {f: str(res.val('lateness', 'early', fac=f, range=rng))
                 for f in FIRE_FACS}
        early = res.val('lateness', 'early', fac='twheel', range=rng)
        t.target(f'lateness {desc}: early fires (of {res.val("lateness", "n", fac="twheel", range=rng)})',
                 cells, 'twheel 0', early, None if early is None else early == 0)


def add_wakeups(t, res):
    for case, name in (('idle', 'no timers'),
                       ('one_hour_away', '1 timer an hour away')):
        v = res.val('wakeups', 'per_s', case=case)
        t.target(f'wheel wakeups/s, {name}', {'twheel': '-' if v is None else f'{v:g}'},
                 '0', v, None if v is None else v == 0)
    for r in sorted((r for r in res.all if r['kind'] == 'wakeups' and
                     r['case'] == 'spread_over_hour'), key=lambda r: r['n']):
        t.row(f'wheel wakeups/s, {f_n(r["n"])} timers over an hour',
              {'twheel': f'{r["per_s"]:g}'})


def add_sizes(t, res):
    t.row('bytes per kernel timer (struct)',
          {f: f_bytes(res.val('size', 'bytes', fac=f)) for f in KFACS})


def largest(res, kind, fac):
    ns = res.ns(kind, fac)
    return ns[-1] if ns else None


def add_user(t, res):
    ufac = {'timerfd': 'timerfd', 'POSIX timer': 'posix'}
    for n in res.ns('uarm'):
        cells = {c: f_rate(res.val('uarm', 'per_s', fac=f, n=n))
                 for c, f in ufac.items()}
        cells['twheel'] = ' / '.join(
            f_rate(res.val('uarm', 'per_s', fac=f, n=n))
            for f in ('twheel_ioctl', 'twheel_batch'))
        t.row(f'userspace arms/s, {f_n(n)} timers (twheel: single / batch)', cells)
    for n in res.ns('uarm'):
        posix = res.get('uarm', fac='posix', n=n)
        if posix and posix.get('armed', n) < n:
            t.row(f'(POSIX at {f_n(n)}: capped after {posix["armed"]} timers)', {})
    n = largest(res, 'uarm', 'timerfd')
    tw = res.val('uarm', 'per_s', fac='twheel_batch', n=n)
    tfd = res.val('uarm', 'per_s', fac='timerfd', n=n)
    r = ratio(tw, tfd)
    t.target(f'batch arm, {f_n(n or 0)}: twheel batch / timerfd = {f_ratio(r)}',
             {'twheel': f_rate(tw), 'timerfd': f_rate(tfd)}, '>= 10x timerfd',
             r, None if r is None else r >= 10, f_ratio(r))


def add_delivery(t, res):
    for n in res.ns('udeliver'):
        t.row(f'delivery, {f_n(n)} due at once: events/s (twheel read, epoll+timerfd)',
              {'twheel': f_rate(res.val('udeliver', 'per_s', fac='twheel_read', n=n)),
               'timerfd': f_rate(res.val('udeliver', 'per_s', fac='epoll_timerfd', n=n))})
        t.row(f'delivery, {f_n(n)}: first event late by',
              {'twheel': f_time(res.val('udeliver', 'first_late_ns', fac='twheel_read', n=n)),
               'timerfd': f_time(res.val('udeliver', 'first_late_ns', fac='epoll_timerfd', n=n))})
    n = largest(res, 'udeliver', 'epoll_timerfd')
    tw = res.val('udeliver', 'per_s', fac='twheel_read', n=n)
    ep = res.val('udeliver', 'per_s', fac='epoll_timerfd', n=n)
    r = ratio(tw, ep)
    t.target(f'delivery, {f_n(n or 0)}: twheel / epoll+timerfd = {f_ratio(r)}',
             {'twheel': f_rate(tw), 'timerfd': f_rate(ep)}, '>= 5x epoll+timerfd',
             r, None if r is None else r >= 5, f_ratio(r))


def add_memory(t, res):
    for n in res.ns('uarm'):
        cells = {c: f_bytes(res.val('uarm', 'mem_b', fac=f, n=n))
                 for c, f in (('timerfd', 'timerfd'), ('POSIX timer', 'posix'))}
        cells['twheel'] = f_bytes(res.val('uarm', 'mem_b', fac='twheel_batch', n=n))
        t.row(f'kernel memory per userspace timer, {f_n(n)}', cells)
    n = largest(res, 'uarm', 'timerfd')
    tw = res.val('uarm', 'mem_b', fac='twheel_batch', n=n)
    tfd = res.val('uarm', 'mem_b', fac='timerfd', n=n)
    r = ratio(tw, tfd)
    t.target(f'memory per timer, {f_n(n or 0)}: twheel / timerfd = {f_ratio(r)}',
             {'twheel': f_bytes(tw), 'timerfd': f_bytes(tfd)}, '<= 0.2x timerfd',
             r, None if r is None else r <= 0.2, f_ratio(r))


def build_table(res):
    env = res.get('env') or {}
    tick = env.get('tick_ns')
    t = Table()
    add_costs(t, res)
    add_cost_targets(t, res)
    add_bursts(t, res)
    add_lateness(t, res, tick)
    add_wakeups(t, res)
    add_sizes(t, res)
    add_user(t, res)
    add_delivery(t, res)
    add_memory(t, res)
    return t, env


def env_line(res, env, host_load):
    uenv = res.get('uenv') or {}
    urounds = max([r.get('rounds', 1) for r in res.all if r['kind'] == 'uarm'] or [0])
    return (f'Environment: HZ={env.get("hz")}, twheel tick {f_time(env.get("tick_ns"))}, '
            f'{env.get("cpus")} CPUs, clocksource {uenv.get("clocksource", "?")}, '
            f'one ktime_get_ns() = {env.get("clock_ns", "?")} ns, '
            f'medians of {env.get("rounds")} rounds (kernel) and {urounds} rounds (userspace); '
            f'host load average {host_load}. Absolute times are under QEMU TCG; '
            'compare ratios within one run.\n\n'
            'Kernel facilities: in the cost rows, twheel arms and modifies with '
            '`twheel_add/twheel_mod(d, TWHEEL_REL)` (one clocksource read per call), '
            'twheel-abs the same timers with `(now + d, TWHEEL_ABS)`, `now` read once '
            'per 1024 operations inside the timed chunk (as timer_list uses `jiffies + d`); '
            'both cancel alike. The burst and lateness rows arm twheel at absolute '
            'deadlines, so they have no twheel-abs column.\n')


def write_dat(res, path):
    with open(path, 'w') as f:
        f.write('# n ' + ' '.join(f'{fac}_{op}' for fac in DAT_FACS
                                  for op in ('arm', 'mod', 'cancel')) + '\n')
        for n in res.ns('cost'):
            vals = [res.val('cost', op + '_ns', fac=fac, n=n)
                    for fac in DAT_FACS for op in ('arm', 'mod', 'cancel')]
            f.write(f'{n} ' + ' '.join('NaN' if v is None else str(v)
                                        for v in vals) + '\n')


def plot(out):
    gp = shutil.which('gnuplot')
    if not gp:
        print('report: no gnuplot, no cost.png', file=sys.stderr)
        return
    subprocess.run([gp, '-e', f"dir='{out}'", os.path.join(HERE, 'plot.gp')],
                   check=True)
    print(f'report: wrote {out}/cost.png')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('logs', nargs='+')
    ap.add_argument('-o', '--out', default=os.path.join(HERE, 'results'))
    ap.add_argument('--no-plot', action='store_true')
    ap.add_argument('--host-load', metavar='TEXT',
                    help='the host load around the run, for the environment '
                    'line (default: the 1/5/15 min load average now)')
    args = ap.parse_args()
    host_load = args.host_load or \
        '(1/5/15 min, at report time) ' + \
        ' / '.join(f'{x:.2f}' for x in os.getloadavg())

    res = Results(parse(args.logs))
    if not res.all:
        sys.exit(f'report: no RESULT lines in {" ".join(args.logs)}')
    table, env = build_table(res)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, 'latest.json'), 'w') as f:
        json.dump({'results': res.all, 'targets': table.targets,
                   'host_load': host_load}, f, indent=1)
        f.write('\n')
    md = ('# twheel benchmark\n\n' + env_line(res, env, host_load) + '\n' +
          table.markdown() + '\n![cost per operation](cost.png)\n')
    with open(os.path.join(args.out, 'latest.md'), 'w') as f:
        f.write(md)
    write_dat(res, os.path.join(args.out, 'cost.dat'))
    print(md)
    if not args.no_plot:
        plot(args.out)
    missed = [x['target'] for x in table.targets if x['verdict'] != 'met']
    print(f'report: {len(table.targets) - len(missed)} of {len(table.targets)} '
          'targets met' + (f'; not met: {"; ".join(missed)}' if missed else ''))


if __name__ == '__main__':
    main()
