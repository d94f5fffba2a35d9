#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions per timer or operation, by kernel symbol, from scripts/vm/insns/run.sh.

DIR holds, for each boot (none, twheel, timer_list), NAME.tb (the tb-count
plugin's blocks: vaddr, instructions, executions) and NAME.log (the console,
with the guest's text symbols between the markers of ksyms.txt). A block is
charged to the symbol it starts in; a burst boot minus the boot without
work, over its timers (burst) or operations (cost), gives the cost of one.
"""
import argparse
import bisect
import collections
import json
import os
import re

# Symbols of the fire path (the rest of a burst is arm and cancel): each
# facility's own, and the lock round trip, the bench's callback body and
# the retpolines of the indirect call, which both pay.
SHARED_FIRE = {'tb_fire_note', '_raw_spin_lock_irq', '_raw_spin_unlock_irq'} | {
    f'__x86_indirect_thunk_{r}' for r in ('r12', 'r13', 'r14', 'r15', 'rax', 'rbx')}
FIRE = {
    'twheel': SHARED_FIRE | {'twheel_run', 'tb_fire_tw'},
    'timer_list': SHARED_FIRE | {'__run_timers', 'call_timer_fn', 'tb_fire_tl'},
}


def symbols(log):
    syms, inside = [], False
    with open(log, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('--- BEGIN ksyms.txt'):
                inside = True
            elif line.startswith('--- END ksyms.txt'):
                break
            elif inside:
                p = line.split()
                if len(p) >= 2:
                    syms.append((int(p[0], 16), ' '.join(p[1:3])))
    if not syms:
        raise SystemExit(f'{log}: no text symbols')
    syms.sort()
    return syms


def per_symbol(tb, log):
    syms = symbols(log)
    addrs = [a for a, _ in syms]
    insns = collections.Counter()
    with open(tb) as f:
        for line in f:
            vaddr, n, execs = line.split()
            i = bisect.bisect_right(addrs, int(vaddr, 16)) - 1
            insns[syms[i][1] if i >= 0 else '?'] += int(n) * int(execs)
    return insns


def records(log, kind):
    """The benchmark's RESULT records of one kind in a boot's console."""
    found = []
    with open(log, errors='replace') as f:
        for line in f:
            m = re.search(r'RESULT (\{"kind":"%s".*\})' % kind, line)
            if m:
                found.append(json.loads(m.group(1)))
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('dir')
    ap.add_argument('--what', choices=('burst', 'cost'), default='burst')
    ap.add_argument('--timers', type=float,
                    help='timers in the bursts of each boot (burst)')
    ap.add_argument('--top', type=int, default=12)
    a = ap.parse_args()
    if a.what == 'burst' and not a.timers:
        ap.error('burst needs --timers')
    d = lambda name, ext: os.path.join(a.dir, f'{name}.{ext}')
    base = per_symbol(d('none', 'tb'), d('none', 'log'))
    if a.what == 'burst':
        unit = 'timer'
        print(f'# Instructions per timer of a burst ({a.timers:,.0f} timers a boot)\n')
        print('Guest instructions by kernel symbol, a boot with bursts of one '
              'facility minus one without, over its burst timers: arm, fire and '
              'cancel_sync of each timer (scripts/vm/insns/run.sh).\n')
    else:
        unit = 'op'
        print('# Instructions per arm, modify or cancel\n')
        print('Guest instructions by kernel symbol, a boot with the cost rounds of '
              'one facility minus one without, over its operations: the mean of '
              'an arm, a modify and a cancel at random deadlines up to an hour, '
              'twheel with absolute ones (scripts/vm/insns/run.sh).\n')
    for fac in ('twheel', 'timer_list'):
        got = per_symbol(d(fac, 'tb'), d(fac, 'log'))
        # A cost record counts each of its three operations ops times.
        units = a.timers if a.what == 'burst' else sum(
            3 * r['ops'] for r in records(d(fac, 'log'), 'cost'))
        delta = {k: (got[k] - base[k]) / units for k in set(got) | set(base)}
        total = sum(delta.values())
        if a.what == 'burst':
            fire = sum(v for k, v in delta.items()
                       if k.split(' ')[0] in FIRE[fac])
            rates = ', '.join(f'{r["per_s"] / 1e6:.2f}'
                              for r in records(d(fac, 'log'), 'burst'))
            print(f'## {fac}: {total:.0f} per timer, {fire:.0f} of them in the '
                  f'fire path (callbacks/s under the plugin: {rates} M)\n')
        else:
            print(f'## {fac}: {total:.0f} per operation ({units:,.0f} '
                  f'operations)\n')
        print(f'| symbol | per {unit} |\n|---|---:|')
        for k, v in sorted(delta.items(), key=lambda kv: -kv[1])[:a.top]:
            print(f'| {k} | {v:.1f} |')
        print()


if __name__ == '__main__':
    main()
