#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host time per callback of a burst, by where QEMU spends it (scripts/vm/hostprof/run.sh).

DIR holds, for twheel and timer_list, NAME.txt (perf script: tid, time,
ip, sym, dso of QEMU's threads, 4999 samples a second) and NAME.log (the
guest's console with the burst records). A burst's fire is the first
120 ms of busy time after its idle wait (the timers are armed 4.5 s
ahead): the first sample after a 20 ms gap with at most 3 % of the
samples of the two seconds before it.
"""
import bisect
import collections
import json
import os
import re
import statistics
import sys

HZ = 4999
WINDOW = 0.12
LOOP = {'cpu_exec', 'qht_lookup_custom', 'tb_htable_lookup', 'helper_lookup_tb_ptr',
        'cpu_handle_interrupt', 'tb_lookup'}


def category(sym, dso):
    if 'perf-' in dso or dso == '//anon':
        return 'translated code'
    if 'kallsyms' in dso:
        return 'host kernel'
    if 'qemu-system' in dso:
        if sym in LOOP:
            return 'execution loop'
        return 'QEMU (helpers, softmmu, devices)'
    return 'libraries'


def samples(path):
    out = []
    for line in open(path, errors='replace'):
        p = line.split(None, 4)
        if len(p) < 4:
            continue
        sym = re.sub(r'\+0x[0-9a-f]+$', '', p[3])
        dso = p[4].strip().strip('()') if len(p) > 4 else ''
        out.append((float(p[1].rstrip(':')), category(sym, dso)))
    out.sort()
    return out


def idle_before(ts, i):
    """Seconds from ts[i] back to the last 50 ms at least half busy."""
    j = i - 1
    while j > 0 and (bisect.bisect_right(ts, ts[j]) -
                     bisect.bisect_left(ts, ts[j] - 0.05)) < 0.5 * 0.05 * HZ:
        j -= 1
    return ts[i] - ts[j]


def fires(s, lead):
    """Samples of the fires: busy after an idle wait of about @lead s."""
    ts = [t for t, _ in s]
    cats, windows, i = collections.Counter(), 0, 1
    while i < len(ts):
        hi = bisect.bisect_right(ts, ts[i] + WINDOW)
        if (ts[i] - ts[i - 1] > 0.02 and hi - i > 0.3 * WINDOW * HZ and
                lead / 2 < idle_before(ts, i) < lead + 0.5):
            windows += 1
            cats.update(c for _, c in s[i:hi])
            i = hi
            continue
        i += 1
    return windows, cats


def rate(path):
    per_s = [json.loads(m.group(1))['per_s'] for m in
             (re.search(r'RESULT (\{"kind":"burst".*\})', line)
              for line in open(path, errors='replace')) if m]
    return statistics.median(per_s), min(per_s), max(per_s)


def main():
    top, n = sys.argv[1], int(sys.argv[2])
    lead = 0.5 + n * 4e-6
    rows, names = collections.defaultdict(dict), ('twheel', 'timer_list')
    head = []
    for name in names:
        windows, cats = fires(samples(os.path.join(top, name + '.txt')), lead)
        med, lo, hi = rate(os.path.join(top, name + '.log'))
        if not windows:
            sys.exit(f'{name}: no burst found in the samples')
        # Host CPU seconds in the windows over the callbacks they hold.
        per_cb = sum(cats.values()) / HZ / (windows * WINDOW * med) * 1e9
        total = sum(cats.values())
        for c, v in cats.items():
            rows[c][name] = per_cb * v / total
        rows['total'][name] = per_cb
        head.append(f'{name} {med / 1e6:.2f} M callbacks/s ({lo / 1e6:.2f}-'
                    f'{hi / 1e6:.2f}), {windows} fires, {total} samples')
    print('# Host time per callback of a burst, by where QEMU spends it\n')
    print('scripts/vm/hostprof/run.sh: ' + '; '.join(head) + '.\n')
    print('| host CPU ns per callback | twheel | timer_list |')
    print('|---|---:|---:|')
    order = sorted((c for c in rows if c != 'total'),
                   key=lambda c: -rows[c].get('twheel', 0))
    for c in order + ['total']:
        print(f'| {c} | ' + ' | '.join(f'{rows[c].get(n, 0):.1f}' for n in names) + ' |')


if __name__ == '__main__':
    main()
