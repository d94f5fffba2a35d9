#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py [-o DIR] [--no-plot] LOG...: the benchmark table.

Reads the 'RESULT {json}' lines of twheel_bench.ko (kernel log) and of
ubench (userspace) from LOG files - the VM console log or the files the rig
extracts from it - and writes DIR/latest.json (every result, the targets and
their verdicts), DIR/latest.md (one table: a column per facility, a goal and
a verdict for each target of issue 5), DIR/cost.dat, DIR/lateness.dat and,
with gnuplot, DIR/cost.png and DIR/lateness.png (bench/plot.gp). A missing
result is reported as such; no target is ever waived.

A measurement made in rounds (its lines carry "round") is reported as the
median over the rounds with its min-max spread: in the JSON each measured
number becomes {"median", "min", "max", "rounds"}; in the table "median
[min, max]". Ratios and differences between facilities are taken round by
round (they ran in the same round, side by side), then summarized alike.
Lateness histograms are summed over the rounds.

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
        'POSIX timer', 'io_uring')
HERE = os.path.dirname(os.path.abspath(__file__))
# The rows of make bench's second boot.
ICOUNT = ('in instructions (one vCPU, QEMU -icount: 1 ns each, '
          'no host preemption)')


def median(vals):
    vals = sorted(vals)
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def stat(vals):
    """The summary of one number measured in rounds."""
    vals = [v for v in vals if v is not None]
    if not vals:
        return None
    return {'median': median(vals), 'min': min(vals), 'max': max(vals),
            'rounds': len(vals)}


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def merge(rounds):
    """One result from the rounds of a measurement: each number becomes its
    stat() over the rounds, a list (a histogram) the sum, a flag true only
    if true in every round, anything else the last round's. The rounds'
    own records stay in '_rounds', by round, for paired ratios."""
    out = dict(rounds[-1])
    out.pop('round', None)
    for k, v in out.items():
        if k in KEY:
            continue
        if is_num(v):
            out[k] = stat([r.get(k) for r in rounds if is_num(r.get(k))])
        elif isinstance(v, list):
            out[k] = [sum(x) for x in zip(*(r[k] for r in rounds
                                             if isinstance(r.get(k), list)))]
        elif isinstance(v, bool):
            out[k] = all(r.get(k) for r in rounds)
    out['rounds'] = len(rounds)
    out['_rounds'] = {r['round']: r for r in rounds}
    return out


def parse(paths):
    """RESULT lines by measurement; the same line seen twice (the console
    log repeats the guest's files) counts once. Lines with a "round" are
    merged into one result per measurement."""
    found, once = {}, {}
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
                if 'round' in r:
                    found.setdefault(key, {})[r['round']] = r
                else:
                    once[key] = r
    return list(once.values()) + \
        [merge([v[i] for i in sorted(v)]) for v in found.values()]


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

    def stat(self, kind, field, **match):
        """The field as a stat() (a single measurement: rounds 1)."""
        r = self.get(kind, **match)
        v = None if r is None else r.get(field)
        return stat([v]) if is_num(v) else v

    def val(self, kind, field, **match):
        """The field's median, or its value."""
        v = self.stat(kind, field, **match)
        return v['median'] if isinstance(v, dict) else v

    def by_round(self, kind, fn, **match):
        """fn(record) for each round of a measurement, by round."""
        r = self.get(kind, **match)
        if r is None:
            return {}
        rounds = r.get('_rounds') or {0: r}
        return {i: fn(x) for i, x in rounds.items()}

    def paired(self, fn, a, b):
        """stat() of fn(a's round, b's round) over the rounds both ran:
        a and b are (kind, field or function, match) triples."""
        def get(spec):
            kind, field, match = spec
            f = field if callable(field) else (lambda x: x.get(field))
            return self.by_round(kind, f, **match)
        ra, rb = get(a), get(b)
        return stat([fn(ra[i], rb[i]) for i in sorted(set(ra) & set(rb))
                     if ra[i] is not None and rb[i] is not None])


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


def f_count(v):
    return '-' if v is None else f'{v:,.0f}'


def f_n(n):
    for div, suf in ((1000000, 'M'), (1000, 'k')):
        if n >= div and n % div == 0:
            return f'{n // div}{suf}'
    return str(n)


def f_ratio(v):
    return '-' if v is None else f'{v:.2f}x'


def spread(fmt, st):
    """A stat() as 'median [min, max]', the min and max in the median's
    unit when they share it; a plain value as itself."""
    if st is None:
        return '-'
    if not isinstance(st, dict):
        return fmt(st)
    med = fmt(st['median'])
    if st['rounds'] < 2:
        return med
    lo, hi = fmt(st['min']), fmt(st['max'])
    unit = med.rsplit(' ', 1)[1] if ' ' in med else None
    if unit and lo.endswith(' ' + unit) and hi.endswith(' ' + unit):
        lo, hi = lo[:-len(unit) - 1], hi[:-len(unit) - 1]
    return f'{med} [{lo}, {hi}]'


def med(st):
    return st['median'] if isinstance(st, dict) else st


# ---- the table ----

class Table:
    def __init__(self):
        self.rows = []
        self.targets = []

    def row(self, metric, cells, goal='', verdict=''):
        self.rows.append((metric, [cells.get(c, '') for c in COLS], goal,
                          verdict))

    def target(self, metric, cells, goal, value, ok, note=''):
        """A target row; ok is None when a result is missing. value is a
        stat() or a plain value; the verdict is on its median."""
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
                  {f: spread(f_ns, res.stat('cost', op + '_ns', fac=f, n=n))
                   for f in KFACS})
    for r in res.all:
        if r['kind'] == 'skip' and r.get('what') == 'cost':
            t.row(f'{f_n(r["n"])} pending: skipped ({r.get("why")})',
                  {r.get('fac'): 'skipped'})
        elif r['kind'] == 'skip':
            t.row(f'{r.get("what")}: skipped ({r.get("why")})', {})


def arm_cancel(r):
    a, c = r.get('arm_ns'), r.get('cancel_ns')
    return None if a is None or c is None else a + c


def add_cost_targets(t, res):
    """The arm+cancel targets, for twheel armed with relative and with
    absolute deadlines alike, each with its own verdict; the ratio is taken
    round by round."""
    ns = res.ns('cost', 'twheel')
    n = 1000000 if 1000000 in ns else (ns[-1] if ns else 1000000)
    cells = {f: spread(f_ns, stat(list(res.by_round('cost', arm_cancel,
                                                    fac=f, n=n).values())))
             for f in KFACS}
    for other, limit in (('timer_list', 1.0), ('hrtimer', 0.3)):
        for fac, how in (('twheel', 'relative'), ('twheel-abs', 'absolute')):
            r = res.paired(ratio, ('cost', arm_cancel, {'fac': fac, 'n': n}),
                           ('cost', arm_cancel, {'fac': other, 'n': n}))
            t.target(f'arm+cancel, {f_n(n)} pending: twheel ({how}) / '
                     f'{other} = {spread(f_ratio, r)}',
                     cells, f'<= {limit}x {other}', r,
                     None if r is None else med(r) <= limit)


def add_bursts(t, res):
    for n in res.ns('burst'):
        cells = {f: spread(f_rate, res.stat('burst', 'per_s', fac=f, n=n))
                 for f in FIRE_FACS}
        r = res.paired(ratio, ('burst', 'per_s', {'fac': 'twheel', 'n': n}),
                       ('burst', 'per_s', {'fac': 'timer_list', 'n': n}))
        t.target(f'burst of {f_n(n)} due at once: callbacks/s, twheel / '
                 f'timer_list = {spread(f_ratio, r)}', cells,
                 '>= 1.0x timer_list', r, None if r is None else med(r) >= 1.0)
        t.row(f'burst of {f_n(n)}: first callback late by',
              {f: spread(f_time, res.stat('burst', 'first_late_ns', fac=f, n=n))
               for f in FIRE_FACS})
        late = [f for f in FIRE_FACS
                if res.get('burst', fac=f, n=n) and
                not res.val('burst', 'armed_in_time', fac=f, n=n)]
        if late:
            t.row(f'(burst of {f_n(n)}: armed after the deadline in some '
                  f'round: {", ".join(late)})', {})


def minus(a, b):
    return a - b


# twheel_bench.c's lateness ranges; "flood" is a load, its p99 no target.
LATENESS_RANGES = (('short', '1-50 ms'), ('long', '1-5 s'),
                   ('sparse', 'sparse 1-50 ms (one at a time)'),
                   ('flood', '1M due over 10 s'))


def add_lateness(t, res, tick):
    for rng, desc in LATENESS_RANGES:
        if not res.get('lateness', range=rng):
            continue
        for fld, name in (('p50_ns', 'p50'), ('p99_ns', 'p99'),
                          ('max_ns', 'max')):
            cells = {f: spread(f_time, res.stat('lateness', fld, fac=f,
                                                range=rng))
                     for f in FIRE_FACS}
            if fld != 'p99_ns' or rng == 'flood':
                t.row(f'lateness {desc}: {name}', cells)
                continue
            p99 = res.stat('lateness', 'p99_ns', fac='twheel', range=rng)
            t.target(f'lateness {desc}: p99', cells,
                     f'twheel <= 1 tick ({f_time(tick)})', p99,
                     None if p99 is None or tick is None else med(p99) <= tick)
        for fld, name in (('p50_ns', 'p50'), ('p99_ns', 'p99')):
            d = res.paired(minus, ('lateness', fld, {'fac': 'twheel', 'range': rng}),
                           ('lateness', fld, {'fac': 'hrtimer', 'range': rng}))
            res.all.append({'kind': 'lateness_vs_hrtimer', 'range': rng,
                            'field': fld, 'twheel_minus_hrtimer_ns': d})
            metric = (f'lateness {desc}: twheel {name} minus hrtimer {name}, '
                      'same round')
            if rng == 'sparse' and fld == 'p50_ns':
                t.target(metric, {'twheel': spread(f_time, d)},
                         f'<= 0.1 tick ({f_time(tick / 10 if tick else None)})', d,
                         None if d is None or tick is None else med(d) <= tick / 10)
            else:
                t.row(metric, {'twheel': spread(f_time, d)})
        late = [f for f in FIRE_FACS
                if any(v is False for v in res.by_round(
                    'lateness', lambda r: r.get('armed_in_time'), fac=f,
                    range=rng).values())]
        if late:
            t.row(f'(lateness {desc}: armed after the first deadline in some '
                  f'round: {", ".join(late)})', {})
        early, total = {}, {}
        for f in FIRE_FACS:
            rounds = res.by_round('lateness', lambda r: (r.get('early'), r.get('n')),
                                  fac=f, range=rng).values()
            early[f] = sum(e or 0 for e, _ in rounds) if rounds else None
            total[f] = sum(n or 0 for _, n in rounds)
        t.target(f'lateness {desc}: early fires (of {total["twheel"]}: '
                 f'{res.val("lateness", "n", fac="twheel", range=rng)} a round)',
                 {f: str(early[f]) for f in FIRE_FACS}, 'twheel 0',
                 early['twheel'], None if early['twheel'] is None
                 else early['twheel'] == 0)


def add_wakeups(t, res):
    for case, name in (('idle', 'no timers'),
                       ('one_hour_away', '1 timer an hour away')):
        v = res.val('wakeups', 'per_s', case=case)
        t.target(f'wheel wakeups/s, {name}', {'twheel': '-' if v is None else f'{v:g}'},
                 '0', v, None if v is None else v == 0)
    for r in sorted((r for r in res.all if r['kind'] == 'wakeups' and
                     r['case'] == 'spread_over_hour'), key=lambda r: r['n']):
        t.row(f'wheel wakeups/s, {f_n(r["n"])} timers over an hour',
              {'twheel': f'{med(r["per_s"]):g}'})
    add_wakeups_slack(t, res)


def add_wakeups_slack(t, res):
    """twheel_bench's slack runs: timers due uniformly over an hour, each
    with a slack of pct % of its delay. The cell is the whole hour on
    virtual time (the wheel's own code, run at each of its events), then a
    window of the guest's real wakeups half an hour in, next to the virtual
    count of the same window in parentheses."""
    for r in sorted((r for r in res.all if r['kind'] == 'wakeups_slack'),
                    key=lambda r: (r['n'], r['pct'])):
        slack = f'{r["pct"]} % slack' if r['pct'] else 'no slack'
        hour = r.get('hour_per_s')
        cell = '-' if hour is None else \
            f'{med(hour):g} (hour, {med(r["hour_runs"]):,.0f} runs)'
        cell += (f'; {med(r["window_ms"]) / 1000:g} s at '
                 f'{med(r["window_at_ms"]) / 60000:.0f} min: guest '
                 f'{med(r["guest_window_per_s"]):g}')
        if 'virtual_window_per_s' in r:
            cell += f', virtual {med(r["virtual_window_per_s"]):g}'
        t.row(f'wakeups/s, {f_n(r["n"])} timers over 1 h, {slack}',
              {'twheel': cell})


def hold_pct(hist, q):
    """The upper bound of the bucket of twheel/irqoff's "hist" (holds by
    length: under 1 us, then one per power of two) that holds the q-th
    quantile; None for the last, open-ended bucket."""
    total, acc = sum(hist), 0
    for b, c in enumerate(hist):
        acc += c
        if acc >= q * total:
            return None if b == len(hist) - 1 else 1024 << b
    return None


def f_holds(hist):
    """'<= p99 / <= p99.9' of the holds summed over the rounds."""
    return ' / '.join('-' if v is None else f'<= {f_time(v)}'
                      for v in (hold_pct(hist, q) for q in (0.99, 0.999)))


def add_load(t, res):
    """twheel_load_test: a burst of /dev/twheel timers on one CPU against a
    task pinned there (issue 11's bounds: interrupts off <= tick / 10, the
    task's longest gap <= 2 ticks)."""
    for r in sorted((r for r in res.all if r['kind'] == 'irqoff' and
                     r.get('what') != 'icount'),
                    key=lambda r: (r['case'], r['n'])):
        v, tick = med(r['max_ns']), med(r['tick_ns'])
        note = ''
        if 'holds' in r:
            note = (f'holds over {f_time(tick / 10)}: {med(r["long_holds"]):.0f} '
                    f'of {med(r["holds"]):.0f} (host vCPU preemption counts)')
        if 'control_ns' in r:
            note += (f'; in a second before, O(1) holds on the same wheel: '
                     f'the longest {spread(f_time, r["control_ns"])}, '
                     f'{med(r["control_long_holds"]):.0f} of '
                     f'{med(r["control_holds"]):.0f} over {f_time(tick / 10)}')
        t.target(f'longest interrupts-off stretch, {f_n(r["n"])} timers, '
                 f'{r["case"]}', {'twheel': spread(f_time, r['max_ns'])},
                 f'<= {f_time(tick / 10)}', r['max_ns'], 0 <= v <= tick / 10, note)
        if 'control_ns' in r:
            t.row(f'the same, control: O(1) arm+cancel next to one pending '
                  f'timer for a second before ({r["case"]})',
                  {'twheel': spread(f_time, r['control_ns'])})
        if 'hist' in r:
            t.row(f'interrupts-off holds, {f_n(r["n"])} timers, {r["case"]}: '
                  f'99th / 99.9th percentile, all rounds (control)',
                  {'twheel': f'{f_holds(r["hist"])} '
                             f'({f_holds(r["control_hist"])})'})
    # The same holds in instructions: one vCPU under -icount shift=0.
    for r in sorted((r for r in res.all if r['kind'] == 'irqoff' and
                     r.get('what') == 'icount'),
                    key=lambda r: (r['case'], r['n'])):
        v, tick = med(r['max_ns']), med(r['tick_ns'])
        t.target(f'longest interrupts-off stretch, {f_n(r["n"])} timers, '
                 f'{r["case"]}, {ICOUNT}',
                 {'twheel': spread(f_time, r['max_ns'])},
                 f'<= {f_time(tick / 10)}', r['max_ns'], 0 <= v <= tick / 10,
                 f'holds over {f_time(tick / 10)}: '
                 f'{med(r["long_holds"]):.0f} of {med(r["holds"]):.0f}')
        t.row(f'interrupts-off holds in instructions, {f_n(r["n"])} timers, '
              f'{r["case"]}: 99th / 99.9th percentile, all rounds',
              {'twheel': f_holds(r['hist'])})
    for icount in (False, True):
        for r in sorted((r for r in res.all if r['kind'] == 'pinned_gap' and
                         (r.get('what') == 'icount') == icount),
                        key=lambda r: (r['case'], r['n'])):
            add_gap(t, r, f', {ICOUNT}' if icount else '')


def add_gap(t, r, how):
    """The pinned task's longest gap (@how: in instructions or not)."""
    v, tick = med(r['max_ns']), med(r['tick_ns'])
    note = ('the same task\'s longest gap in a quiet second before: '
            f'{spread(f_time, r["control_ns"])}')
    if 'last_late_ns' in r:
        note += (f'; last event read {f_time(med(r["last_late_ns"]))} '
                 'after the deadline')
    t.target(f'pinned task\'s longest gap, {f_n(r["n"])} timers, '
             f'{r["case"]}{how}', {'twheel': spread(f_time, r['max_ns'])},
             f'<= {f_time(2 * tick)}', r['max_ns'], v <= 2 * tick, note)
    t.row(f'the same task\'s longest gap in a quiet second before '
          f'with no timers ({r["case"]}{how})',
          {'twheel': spread(f_time, r['control_ns'])})


def add_sizes(t, res):
    t.row('bytes per kernel timer (struct)',
          {f: f_bytes(res.val('size', 'bytes', fac=f)) for f in KFACS})


def largest(res, kind, fac):
    ns = res.ns(kind, fac)
    return ns[-1] if ns else None


def add_user(t, res):
    ufac = {'timerfd': 'timerfd', 'POSIX timer': 'posix'}
    for n in res.ns('uarm'):
        cells = {c: spread(f_rate, res.stat('uarm', 'per_s', fac=f, n=n))
                 for c, f in ufac.items()}
        cells['io_uring'] = spread(f_rate, res.stat('uarm', 'per_s', fac='io_uring', n=n))
        cells['twheel'] = ' / '.join(
            spread(f_rate, res.stat('uarm', 'per_s', fac=f, n=n))
            for f in ('twheel_ioctl', 'twheel_batch'))
        t.row(f'userspace arms/s, {f_n(n)} timers (twheel: single / batch)', cells)
    for n in res.ns('ufree'):
        cells = {c: spread(f_rate, res.stat('ufree', 'per_s', fac=f, n=n))
                 for c, f in ufac.items()}
        cells['twheel'] = spread(f_rate, res.stat('ufree', 'per_s', fac='twheel_batch', n=n))
        t.row(f'userspace teardown/s, {f_n(n)} pending (twheel, timerfd: close; POSIX: timer_delete)', cells)
    for n in res.ns('uarm'):
        armed = res.val('uarm', 'armed', fac='posix', n=n)
        if armed is not None and armed < n:
            t.row(f'(POSIX at {f_n(n)}: capped after {armed:.0f} timers)', {})
    n = largest(res, 'uarm', 'timerfd')
    r = res.paired(ratio, ('uarm', 'per_s', {'fac': 'twheel_batch', 'n': n}),
                   ('uarm', 'per_s', {'fac': 'timerfd', 'n': n}))
    t.target(f'batch arm, {f_n(n or 0)}: twheel batch / timerfd = {spread(f_ratio, r)}',
             {'twheel': spread(f_rate, res.stat('uarm', 'per_s', fac='twheel_batch', n=n)),
              'timerfd': spread(f_rate, res.stat('uarm', 'per_s', fac='timerfd', n=n))},
             '>= 10x timerfd', r, None if r is None else med(r) >= 10)
    n = largest(res, 'uarm', 'io_uring')
    if n:
        r = res.paired(ratio, ('uarm', 'per_s', {'fac': 'twheel_batch', 'n': n}),
                       ('uarm', 'per_s', {'fac': 'io_uring', 'n': n}))
        t.target(f'batch arm, {f_n(n)}: twheel batch / io_uring = {spread(f_ratio, r)}',
                 {'twheel': spread(f_rate, res.stat('uarm', 'per_s', fac='twheel_batch', n=n)),
                  'io_uring': spread(f_rate, res.stat('uarm', 'per_s', fac='io_uring', n=n))},
                 '>= 4x io_uring', r, None if r is None else med(r) >= 4)


# Delivery contenders: the column, and the facilities in it ("read / ring").
DELIVER_COLS = (('twheel', ('twheel_read', 'twheel_ring')),
                ('timerfd', ('epoll_timerfd',)), ('io_uring', ('io_uring',)))


def deliver_cells(res, key, fmt, n):
    return {c: ' / '.join(spread(fmt, res.stat('udeliver', key, fac=f, n=n))
                          for f in facs)
            for c, facs in DELIVER_COLS}


def add_delivery(t, res):
    for n in res.ns('udeliver'):
        t.row(f'delivery, {f_n(n)} due at once: events/s (twheel read / ring, '
              'epoll+timerfd, io_uring)', deliver_cells(res, 'per_s', f_rate, n))
        t.row(f'delivery, {f_n(n)}: first event in userspace, late by',
              deliver_cells(res, 'first_late_ns', f_time, n))
        t.row(f'delivery, {f_n(n)}: last event in userspace, late by',
              deliver_cells(res, 'last_late_ns', f_time, n))
    n = largest(res, 'udeliver', 'epoll_timerfd')
    r = res.paired(ratio, ('udeliver', 'per_s', {'fac': 'twheel_read', 'n': n}),
                   ('udeliver', 'per_s', {'fac': 'epoll_timerfd', 'n': n}))
    t.target(f'delivery, {f_n(n or 0)}: twheel / epoll+timerfd = {spread(f_ratio, r)}',
             {'twheel': spread(f_rate, res.stat('udeliver', 'per_s', fac='twheel_read', n=n)),
              'timerfd': spread(f_rate, res.stat('udeliver', 'per_s', fac='epoll_timerfd', n=n))},
             '>= 5x epoll+timerfd', r, None if r is None else med(r) >= 5)
    # Issue 12: the last event of a burst, twheel's ring against the others,
    # at every N of 100k and more both ran.
    for other, col, limit in (('io_uring', 'io_uring', 0.5),
                              ('epoll_timerfd', 'timerfd', 0.2)):
        both = set(res.ns('udeliver', 'twheel_ring')) & set(res.ns('udeliver', other))
        for n in sorted(v for v in both if v >= 100000):
            last_event_target(t, res, n, other, col, limit)


def last_event_target(t, res, n, other, col, limit):
    r = res.paired(ratio, ('udeliver', 'last_late_ns', {'fac': 'twheel_ring', 'n': n}),
                   ('udeliver', 'last_late_ns', {'fac': other, 'n': n}))
    t.target(f'last event, {f_n(n)} due at once: twheel ring / {other} = '
             f'{spread(f_ratio, r)}',
             {'twheel': spread(f_time, res.stat('udeliver', 'last_late_ns',
                                                fac='twheel_ring', n=n)),
              col: spread(f_time, res.stat('udeliver', 'last_late_ns',
                                           fac=other, n=n))},
             f'<= {limit}x {other}', r, None if r is None else med(r) <= limit)


def add_keyed(t, res, tick):
    """ubench's keyed timers through /dev/twheel under the load of
    twheel_bench's "flood" range (issue 11: p99 <= hrtimer's p99 + 2 ticks)."""
    # Judged reaped on the CPU the timers fire on; on another one, each
    # batch of fires wakes the reaper with an IPI, which under TCG may wait
    # for a preempted vCPU (README, "Where the 1M keyed timers' late events
    # came from").
    same = {'fac': 'twheel_ring', 'case': 'same_cpu'}
    for n in res.ns('ukeyed'):
        tw = res.stat('ukeyed', 'p99_ns', n=n, **same)
        hr = res.stat('lateness', 'p99_ns', fac='hrtimer', range='flood')
        for fld, name in (('p50_ns', 'fire p50'), ('max_ns', 'fire max'),
                          ('user_p99_ns', 'in userspace p99')):
            t.row(f'{f_n(n)} keyed timers over 10 s via /dev/twheel ring: {name}',
                  {'twheel': spread(f_time, res.stat('ukeyed', fld, n=n, **same))})
        ok = None if tw is None or hr is None or tick is None \
            else med(tw) <= med(hr) + 2 * tick
        t.target(f'{f_n(n)} keyed timers over 10 s via /dev/twheel ring: fire p99 '
                 '(hrtimer: the same load in the kernel)',
                 {'twheel': spread(f_time, tw), 'hrtimer': spread(f_time, hr)},
                 f'<= hrtimer p99 + 2 ticks ({f_time(2 * tick) if tick else "-"})',
                 tw, ok)
        other = res.stat('ukeyed', 'p99_ns', fac='twheel_ring', n=n,
                         case='other_cpu')
        t.row(f'{f_n(n)} keyed timers over 10 s, reaped on another CPU: fire p99',
              {'twheel': spread(f_time, other)})
        late = res.stat('ukeyed', 'late_10_ticks', n=n, **same)
        start = res.stat('ukeyed', 'late_at_span_start', n=n, **same)
        t.row(f'{f_n(n)} keyed timers over 10 s: events over 10 ticks late / '
              'of them due in the first 1/16 of a level-2 slot (cascade wait)',
              {'twheel': f'{spread(f_count, late)} / {spread(f_count, start)}'})
        early = sum(sum(res.by_round('ukeyed', lambda r: r.get('early') or 0,
                                     fac='twheel_ring', n=n, case=c).values())
                    for c in ('same_cpu', 'other_cpu'))
        t.target(f'{f_n(n)} keyed timers over 10 s via /dev/twheel ring: early events',
                 {'twheel': '-' if early is None else f'{early:g}'}, '0', early,
                 None if early is None else early == 0)


def add_memory(t, res):
    for n in res.ns('uarm'):
        cells = {c: spread(f_bytes, res.stat('uarm', 'mem_b', fac=f, n=n))
                 for c, f in (('timerfd', 'timerfd'), ('POSIX timer', 'posix'),
                              ('io_uring', 'io_uring'))}
        cells['twheel'] = spread(f_bytes, res.stat('uarm', 'mem_b', fac='twheel_batch', n=n))
        t.row(f'kernel memory per userspace timer, {f_n(n)}', cells)
    n = largest(res, 'uarm', 'timerfd')
    r = res.paired(ratio, ('uarm', 'mem_b', {'fac': 'twheel_batch', 'n': n}),
                   ('uarm', 'mem_b', {'fac': 'timerfd', 'n': n}))
    t.target(f'memory per timer, {f_n(n or 0)}: twheel / timerfd = {spread(f_ratio, r)}',
             {'twheel': spread(f_bytes, res.stat('uarm', 'mem_b', fac='twheel_batch', n=n)),
              'timerfd': spread(f_bytes, res.stat('uarm', 'mem_b', fac='timerfd', n=n))},
             '<= 0.2x timerfd', r, None if r is None else med(r) <= 0.2)
    # Issue 12: the key table and a ring included, amortized at 100k.
    m = res.stat('uarm', 'mem_b', fac='twheel_batch', n=100000)
    if m is not None:
        t.target('memory per /dev/twheel timer, 100k, key table and ring included',
                 {'twheel': spread(f_bytes, m)}, '<= 145 B', m, med(m) <= 145)


def build_table(res):
    env = res.get('env') or {}
    # The guest's clocksource: the bench script's record, else ubench's.
    cs = res.val('guest', 'clocksource') or res.val('uenv', 'clocksource')
    if env:
        env['clocksource'] = cs or 'unknown'
    tick = env.get('tick_ns')
    t = Table()
    add_costs(t, res)
    add_cost_targets(t, res)
    add_bursts(t, res)
    add_lateness(t, res, tick)
    add_wakeups(t, res)
    add_load(t, res)
    add_sizes(t, res)
    add_user(t, res)
    add_delivery(t, res)
    add_keyed(t, res, tick)
    add_memory(t, res)
    return t, env


def env_line(res, env, host_load):
    urounds = max([r.get('rounds', 1) for r in res.all if r['kind'] == 'uarm'] or [0])
    return (f'Kernel {env.get("kernel", "?")}; '
            f'clocksource **{env.get("clocksource", "unknown")}**; '
            f'HZ={env.get("hz")}, twheel tick {f_time(env.get("tick_ns"))}, '
            f'{env.get("cpus")} CPUs, one ktime_get_ns() = {env.get("clock_ns", "?")} ns; '
            f'{env.get("rounds")} rounds (kernel) and {urounds} rounds (userspace), '
            'facilities interleaved in each: every cell is the median [min, max] '
            'over the rounds, and ratios and differences are taken within each '
            f'round; host load average {host_load}. Absolute times are under QEMU '
            'TCG: the ratios, not the times, are the result.\n\n'
            'Kernel facilities: in the cost rows, twheel arms and modifies with '
            '`twheel_add/twheel_mod(d, TWHEEL_REL)` (one clocksource read per call), '
            'twheel-abs the same timers with `(now + d, TWHEEL_ABS)`, `now` read once '
            'per 1024 operations inside the timed chunk (as timer_list uses `jiffies + d`); '
            'both cancel alike. The burst and lateness rows arm twheel at absolute '
            'deadlines, so they have no twheel-abs column. In the lateness rows each '
            'facility runs alone, in turn, with the same delays; twheel\'s fire time '
            'is `twheel_fire_time()` (the clock read once per slot), timer_list\'s and '
            'hrtimer\'s a clock read in the callback.\n\n'
            'Slack rows: timers due uniformly over an hour, each with a slack '
            'of a share of its delay; the hour is counted on virtual time '
            'through the wheel\'s own code (wheel.c run at each of its events), '
            'and checked against twheel\'s real wakeups in a window of the '
            'guest half an hour in, beside the virtual count of that window.\n')


def write_dat(res, path):
    with open(path, 'w') as f:
        f.write('# n ' + ' '.join(f'{fac}_{op}' for fac in DAT_FACS
                                  for op in ('arm', 'mod', 'cancel')) + '\n')
        for n in res.ns('cost'):
            vals = [res.val('cost', op + '_ns', fac=fac, n=n)
                    for fac in DAT_FACS for op in ('arm', 'mod', 'cancel')]
            f.write(f'{n} ' + ' '.join('NaN' if v is None else str(v)
                                        for v in vals) + '\n')


# twheel_bench.c's lateness histogram: bucket 0 below 1 us, then five a
# decade with these mantissas (ns), the last bucket open.
HIST_MANT = (1000, 1585, 2512, 3981, 6310)
HIST_EDGES = [m * 10 ** d for d in range(7) for m in HIST_MANT]


def write_lateness_dat(res, path):
    """The share of fires at most x late, summed over the rounds: x (us) at
    each histogram bucket's upper edge, a column per range and facility."""
    cols = [(rng, f) for rng in ('short', 'long') for f in FIRE_FACS]
    cdfs = []
    for rng, f in cols:
        h = res.val('lateness', 'hist', fac=f, range=rng)
        if not h or not sum(h):
            cdfs.append(None)
            continue
        acc, out = 0, []
        for c in h:
            acc += c
            out.append(acc / sum(h))
        cdfs.append(out)
    uppers = HIST_EDGES + [HIST_EDGES[-1] * 10 // 6.31]
    with open(path, 'w') as f:
        f.write('# late_us ' + ' '.join(f'{r}_{fac}' for r, fac in cols) + '\n')
        for i, up in enumerate(uppers):
            f.write(f'{up / 1000:g} ' + ' '.join(
                'NaN' if c is None or i >= len(c) else f'{c[i]:.4f}'
                for c in cdfs) + '\n')


def plot(out):
    gp = shutil.which('gnuplot')
    if not gp:
        print('report: no gnuplot (apt-get install gnuplot-nox), no plots',
              file=sys.stderr)
        return
    subprocess.run([gp, '-e', f"dir='{out}'", os.path.join(HERE, 'plot.gp')],
                   check=True)
    print(f'report: wrote {out}/cost.png and {out}/lateness.png')


def public(r):
    return {k: v for k, v in r.items() if not k.startswith('_')}


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
        json.dump({'results': [public(r) for r in res.all],
                   'targets': table.targets, 'host_load': host_load}, f,
                  indent=1)
        f.write('\n')
    md = ('# twheel benchmark\n\n' + env_line(res, env, host_load) + '\n' +
          table.markdown() + '\n![cost per operation](cost.png)\n' +
          '![lateness distributions](lateness.png)\n')
    with open(os.path.join(args.out, 'latest.md'), 'w') as f:
        f.write(md)
    write_dat(res, os.path.join(args.out, 'cost.dat'))
    write_lateness_dat(res, os.path.join(args.out, 'lateness.dat'))
    print(md)
    if not args.no_plot:
        plot(args.out)
    missed = [x['target'] for x in table.targets if x['verdict'] != 'met']
    print(f'report: {len(table.targets) - len(missed)} of {len(table.targets)} '
          'targets met' + (f'; not met: {"; ".join(missed)}' if missed else ''))


if __name__ == '__main__':
    main()
