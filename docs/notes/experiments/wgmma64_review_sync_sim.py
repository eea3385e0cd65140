#!/usr/bin/env python3
"""Random-interleaving simulation of wgmma_rows64.h's barrier protocol (reviewer's model).

Roles: producer, consumer 0, consumer 1, each a generator transcribed from the kernel's control
flow. mbarriers: expected count, arrivals, completed phases; try_wait.parity as the hardware does
it (passes iff the current phase parity != P) and an ABA check (the awaited completion must be the
latest one, not an older or newer one). Buffers (stage s tile contents, the P chunk of each stage,
alpha/max per consumer) carry versions; readers hold intervals (issue .. wait/read), writers assert
no open reader interval and readers assert the version at both ends.
Run: python3 rows64_sync_sim.py   (tile counts 0..9, 3000 random schedules each)
"""
import random, sys

class Bar:
    def __init__(s, name, count): s.name, s.count, s.arr, s.done = name, count, 0, 0
    def arrive(s, n=1):
        s.arr += n
        assert s.arr <= s.count, (s.name, 'over-arrival')
        if s.arr == s.count: s.arr = 0; s.done += 1

class Sim:
    def __init__(s, n_tiles, rng):
        s.n, s.rng = n_tiles, rng
        s.full = [Bar('full%d' % i, 128) for i in range(2)]
        s.empty = [Bar('empty%d' % i, 8) for i in range(2)]
        s.p_full = [Bar('p_full%d' % i, 128) for i in range(2)]
        s.p_empty = [Bar('p_empty%d' % i, 4) for i in range(2)]
        s.stage = [None, None]; s.pchunk = [None, None]; s.am = [None, None]
        s.readers = {}  # buffer -> set of reader ids
        s.errors = []
    # --- helpers
    def wait(s, bar, n):  # generator step: wait for completion #n of bar
        while True:
            phase_bit = bar.done & 1
            if phase_bit != (n & 1):  # hardware passes
                if bar.done != n + 1: s.errors.append(('ABA', bar.name, 'want', n, 'done', bar.done))
                return
            if bar.done > n + 1: s.errors.append(('ABA-block', bar.name, n, bar.done))
            yield
    def write(s, buf, val):
        if s.readers.get(buf): s.errors.append(('WAR', buf, val, s.readers[buf]))
        kind, idx = buf
        getattr(s, kind)[idx] = val
    def rbegin(s, buf, rid, want):
        kind, idx = buf
        if getattr(s, kind)[idx] != want: s.errors.append(('stale read', buf, want, getattr(s, kind)[idx]))
        s.readers.setdefault(buf, set()).add(rid)
    def rend(s, buf, rid, want):
        kind, idx = buf
        if getattr(s, kind)[idx] != want: s.errors.append(('overwritten during read', buf, want))
        s.readers[buf].discard(rid)

    def producer(s):
        for t in range(s.n):
            st, use = t % 2, t // 2
            if use > 0: yield from s.wait(s.empty[st], use - 1)
            yield
            s.write(('stage', st), t); s.write(('pchunk', st), ('rope', t))
            s.full[st].arrive(128)
            yield

    def consumer(s, w):
        other = 1 - w
        def begin_other(t, b):
            yield from s.wait(s.p_full[b], t // 2)
            st = t % 2
            yield from s.wait(s.full[st], t // 2)
            s.rbegin(('am', b), ('c', w, 'am'), t); s.rend(('am', b), ('c', w, 'am'), t)
            s.rbegin(('stage', st), ('c', w, 'pv', t), t)          # V
            s.rbegin(('pchunk', st), ('c', w, 'pvP', t), ('P', t))  # P (SS A)
        def end_other(t, b):
            yield
            st = t % 2
            s.rend(('stage', st), ('c', w, 'pv', t), t); s.rend(('pchunk', st), ('c', w, 'pvP', t), ('P', t))
            s.empty[st].arrive(4)
            s.p_empty[b].arrive(4)
        i = 0
        while 2 * i < s.n:
            t_own = 2 * i + w; own = t_own < s.n; t_other = 2 * i + other
            if own:
                st = t_own % 2
                yield from s.wait(s.full[st], t_own // 2)
                s.rbegin(('stage', st), ('c', w, 'S'), t_own); s.rbegin(('pchunk', st), ('c', w, 'Srope'), ('rope', t_own))
                yield
                s.rend(('stage', st), ('c', w, 'S'), t_own); s.rend(('pchunk', st), ('c', w, 'Srope'), ('rope', t_own))
            if w == 1:
                yield from begin_other(t_other, other)
                yield
                yield from end_other(t_other, other)
            if own:
                if i > 0: yield from s.wait(s.p_empty[w], i - 1)
                yield  # named barrier 2 + w (all warps' S done: modelled by S being one agent)
                st = t_own % 2
                s.write(('pchunk', st), ('P', t_own)); s.write(('am', w), t_own)
                s.p_full[w].arrive(128)
                s.rbegin(('stage', st), ('c', w, 'rs'), t_own)
                yield
                s.rend(('stage', st), ('c', w, 'rs'), t_own)
                s.empty[st].arrive(4)
            if w == 0 and t_other < s.n:
                yield from begin_other(t_other, other)
                yield
                yield from end_other(t_other, other)
            i += 1

    def run(s):
        roles = {'P': s.producer(), 'C0': s.consumer(0), 'C1': s.consumer(1)}
        steps = 0
        while roles:
            name = s.rng.choice(sorted(roles))
            try: next(roles[name])
            except StopIteration: del roles[name]
            steps += 1
            if steps > 100000: s.errors.append(('hang', sorted(roles))); break
            if s.errors: break
        return s.errors

def main():
    bad = 0
    for n in range(10):
        for seed in range(3000):
            errs = Sim(n, random.Random(seed * 131 + n)).run()
            if errs:
                bad += 1
                if bad < 5: print('n_tiles', n, 'seed', seed, errs[:3])
    print('sync simulation:', 'OK (n_tiles 0..9, 3000 schedules each)' if not bad else '%d FAILING runs' % bad)
    return bad

if __name__ == '__main__':
    sys.exit(1 if main() else 0)
