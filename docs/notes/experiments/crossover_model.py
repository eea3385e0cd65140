#!/usr/bin/env python3
"""Host model of the crossover in stage1/wgmma_rows64.h (exp_rows64_crossover.patch).

Two CTAs of a cluster (ranks 0, 1) run the heads-as-M 64-row kernel on the same tiles; each
CTA's producer converts half of every tile (tokens 32 r .. 32 r + 31) and stores it into its own
stage and into the peer's. Two parts, both transcribed from the kernel (rows64_cross_producer,
rows64_consumer<Cfg, true>, the kernel's barrier inits and cluster barrier):

1. Layout (layout_check): which lane of which warp of which CTA loads which bytes of which
   cache row, and where each f16 element lands (chunk, row, swizzled granule, word) in BOTH CTAs'
   stages. Checks: every element of both stages (64 rows x 576 dims) written exactly once, by the
   right (token, dim); rows past the tile's end zero; the shuffle source lane holds the row's
   pointer; each latent load instruction reads 4 rows x 128 contiguous bytes (quarter warps);
   each 16-byte store instruction is free of bank conflicts (8 lanes of a quarter warp = one
   128-byte wavefront hit 8 distinct granule positions).
2. Protocol (Sim): per CTA 4 producer warps, consumer warpgroups 0 and 1 (the seesaw as the
   kernel), mbarriers with counts / phases / try_wait.parity (and an ABA check), data versions
   per (CTA, stage, part) with reader intervals, a cluster barrier at the start, exits. Random
   interleavings, tile counts 0..9. Checks: no stale read (a reader sees the tile it waited
   for in every part, at issue and at completion), no write under an open reader interval in
   either CTA (no stage overwritten before both CTAs released it), no over-arrival, no arrival on
   an uninitialised barrier, no remote operation on a CTA that has exited, no hang (every agent
   blocked). Mutants (drop a wait, miscount an arrival, ...) must each be caught.
Run: python3 docs/notes/experiments/crossover_model.py   (~1 min; exit 0: all ok)
"""
import random
import sys

# ---------------------------------------------------------------------------------------------
# 1. Layout
# ---------------------------------------------------------------------------------------------
CHUNK = 8192
ROPE_CHUNK = 8
K_LOADS = 8
LAYOUT_MUTANT = None  # 'no_swap' | 'same_row' | 'rope_row': layout mutants (must be caught)


def sw128_offset(r, j):
    return r * 128 + ((j ^ (r & 7)) << 4)


def producer_pieces(rank, pw, lane):
    """(piece k, source row of the warp (0..7), source kind, first code) as load_piece."""
    c, q = lane >> 2, lane & 3
    out = []
    for k in range(K_LOADS + 1):
        if k < K_LOADS:
            rr = (k + 2 * (c >> 1)) & 7 if LAYOUT_MUTANT != 'same_row' else k
            out.append((k, rr, 'latent', 16 * lane))
        else:
            out.append((k, c, 'rope', 16 * q))
    return out


def stores_of(rank, pw, lane, k):
    """store_piece: [(byte offset in the tile, [(kind, code index)] x 8 f16)] for piece k."""
    c, q = lane >> 2, lane & 3
    cc = c
    latent = k < K_LOADS
    row0 = 32 * rank + 8 * pw
    rr = (k + 2 * (cc >> 1)) & 7 if LAYOUT_MUTANT != 'same_row' else k
    row = row0 + (rr if latent else (cc if LAYOUT_MUTANT != 'rope_row' else cc >> 1))
    chunk = cc if latent else ROPE_CHUNK
    s = (cc & 1) if latent and LAYOUT_MUTANT != 'no_swap' else 0
    codes = list(range(16))               # the 16 codes of the 16-byte load, in order
    words = [codes[4 * i:4 * i + 4] for i in range(4)]
    if s:
        words = [words[2], words[3], words[0], words[1]]
    f = []                                # decode16: word i -> f[2i] (codes 0, 1), f[2i + 1]
    for w in words:
        f += [(w[0], w[1]), (w[2], w[3])]
    at0 = chunk * CHUNK + sw128_offset(row, 2 * q + s)
    at1 = chunk * CHUNK + sw128_offset(row, 2 * q + 1 - s)
    return row, [(at0, f[0:4]), (at1, f[4:8])]


def layout_check(valid_rows_cases=(64, 1, 31, 32, 33, 40, 63)):
    errors = []
    for valid in valid_rows_cases:
        # smem[cta][byte offset of an f16] = (token row, dim) or 'zero'
        smem = [dict(), dict()]
        for rank in range(2):
            for pw in range(4):
                row0 = 32 * rank + 8 * pw
                valid_here = valid - row0
                # lanes 0..7 hold the pointers of rows row0 + lane (lanes 8..31: lane % 8)
                ptr_row = [row0 + (lane & 7) for lane in range(32)]
                loads = {}  # (k, lane) -> (token row, first dim) or None (zeros)
                for lane in range(32):
                    for (k, rr, kind, code0) in producer_pieces(rank, pw, lane):
                        src_row = ptr_row[rr]  # __shfl_sync from lane rr
                        if src_row != row0 + rr:
                            errors.append(('shuffle', rank, pw, lane, k))
                        ok = rr < valid_here
                        dim0 = code0 if kind == 'latent' else 512 + code0
                        loads[(k, lane)] = (src_row, dim0) if ok else None
                # coalescing: latent load k, quarter G: one row, 128 contiguous bytes
                for k in range(K_LOADS):
                    rows_k = set()
                    for G in range(4):
                        ls = range(8 * G, 8 * G + 8)
                        prs = {producer_pieces(rank, pw, l)[k][1] for l in ls}
                        offs = sorted(producer_pieces(rank, pw, l)[k][3] for l in ls)
                        if len(prs) != 1 or offs != list(range(128 * G, 128 * G + 128, 16)):
                            errors.append(('coalescing', rank, pw, k, G))
                        rows_k |= prs
                    if len(rows_k) != 4:
                        errors.append(('rows per load', rank, pw, k, rows_k))
                for k in range(K_LOADS + 1):
                    for which in range(2):  # the two 16-byte stores of piece k
                        for G in range(4):  # bank conflicts: one wavefront per quarter warp
                            gran = set()
                            for lane in range(8 * G, 8 * G + 8):
                                _, st = stores_of(rank, pw, lane, k)
                                gran.add((st[which][0] % 128) // 16)
                            if len(gran) != 8:
                                errors.append(('bank conflict', rank, pw, k, which, G))
                    for lane in range(32):
                        row, st = stores_of(rank, pw, lane, k)
                        src = loads[(k, lane)]
                        for at, pairs in st:
                            for wi, (c0, c1) in enumerate(pairs):
                                for hi, code in enumerate((c0, c1)):
                                    byte = at + 4 * wi + 2 * hi
                                    val = 'zero' if src is None else (src[0], src[1] + code)
                                    for cta in range(2):  # local and the peer (same offset)
                                        if byte in smem[cta]:
                                            errors.append(('twice', valid, cta, byte))
                                        smem[cta][byte] = val
        for cta in range(2):
            for tok in range(64):
                for dim in range(576):
                    chunk, d = dim // 64, dim % 64
                    byte = chunk * CHUNK + sw128_offset(tok, d // 8) + 2 * (d % 8)
                    want = (tok, dim) if tok < valid else 'zero'
                    got = smem[cta].get(byte)
                    if got != want:
                        errors.append(('element', valid, cta, tok, dim, got, want))
                        break
            if len(smem[cta]) != 64 * 576:
                errors.append(('bytes written', valid, cta, len(smem[cta])))
    return errors


# ---------------------------------------------------------------------------------------------
# 2. Protocol
# ---------------------------------------------------------------------------------------------
class Bar:
    def __init__(s, name, count):
        s.name, s.count, s.arr, s.done, s.init = name, count, 0, 0, False

    def arrive(s, sim, n=1):
        if not s.init:
            sim.err(('arrive before init', s.name))
            return
        s.arr += n
        if s.arr > s.count:
            sim.err(('over-arrival', s.name))
        if s.arr >= s.count:
            s.arr -= s.count
            s.done += 1


PRODUCER_WARPS = 4
MUTANTS = {
    None: 'the kernel',
    'no_empty_wait': 'producer does not wait on its empty barrier',
    'full_count_local': 'full counts only the local producer (128)',
    'empty_count_local': 'empty counts 8 and consumers arrive only locally',
    'no_remote_empty': 'empty counts 16, consumers arrive only locally',
    'no_remote_full': 'producer does not arrive on the peer full barrier',
    'arrive_before_store': 'producer arrives (local and remote) before its stores',
    'remote_full_wrong_stage': 'remote full arrival on the other stage',
    'no_cluster_sync': 'no cluster barrier after the barrier inits',
    'release_last': 'consumers release (remotely too) the last kStages tiles',
    'empty_count_15': 'empty initialised to 15',
    'consumer_no_full_wait': 'consumer 0 does not wait full for its own tile',
}


class Sim:
    def __init__(s, n_tiles, rng, mutant=None):
        s.n, s.rng, s.m = n_tiles, rng, mutant
        s.errors = []
        full_count = 128 if mutant == 'full_count_local' else 256
        empty_count = {'empty_count_local': 8, 'empty_count_15': 15}.get(mutant, 16)
        s.full = [[Bar('cta%d.full%d' % (x, i), full_count) for i in range(2)] for x in range(2)]
        s.empty = [[Bar('cta%d.empty%d' % (x, i), empty_count) for i in range(2)]
                   for x in range(2)]
        s.p_full = [[Bar('cta%d.p_full%d' % (x, i), 128) for i in range(2)] for x in range(2)]
        s.p_empty = [[Bar('cta%d.p_empty%d' % (x, i), 4) for i in range(2)] for x in range(2)]
        # stage contents: [cta][stage][part] part = (rank, warp); latent+rope of that part, and
        # the rope chunk separately (P overwrites it in the consumer's CTA only)
        s.stage = [[[[None] * PRODUCER_WARPS for _ in range(2)] for _ in range(2)]
                   for _ in range(2)]
        s.pchunk = [[[[None] * PRODUCER_WARPS for _ in range(2)] for _ in range(2)]
                    for _ in range(2)]
        s.am = [[None, None], [None, None]]
        s.readers = {}
        s.inited = [False, False]
        s.exited = [False, False]
        s.live = [0, 0]

    def err(s, e):
        s.errors.append(e)

    # -- waits: generator steps; blocked -> yield False, pass -> return
    def wait(s, bar, n):
        while True:
            if (bar.done & 1) != (n & 1):
                if bar.done != n + 1:
                    s.err(('ABA', bar.name, 'want', n, 'done', bar.done))
                return
            yield False

    # -- data
    def parts(s, kind, x, st):
        return getattr(s, kind)[x][st]

    def write_part(s, kind, x, st, rank, w, val, by):
        if by[0] != x and s.exited[x]:
            s.err(('remote write to exited CTA', x, by))
        key = (kind, x, st)
        if s.readers.get(key):
            s.err(('overwrite under a reader', key, val, sorted(s.readers[key])))
        s.parts(kind, x, st)[rank][w] = val

    def rcheck(s, kind, x, st, want, what):
        for rank in range(2):
            for w in range(PRODUCER_WARPS):
                got = s.parts(kind, x, st)[rank][w]
                if got != want:
                    s.err((what, kind, x, st, (rank, w), 'want', want, 'got', got))
                    return

    def rbegin(s, kind, x, st, rid, want):
        s.rcheck(kind, x, st, want, 'stale read')
        s.readers.setdefault((kind, x, st), set()).add(rid)

    def rend(s, kind, x, st, rid, want):
        s.rcheck(kind, x, st, want, 'overwritten during read')
        s.readers[(kind, x, st)].discard(rid)

    def remote_arrive(s, x, bar, n, by):
        if s.exited[x]:
            s.err(('remote arrival on exited CTA', bar.name, by))
        bar.arrive(s, n)

    # -- roles
    def init(s, x):
        for b in s.full[x] + s.empty[x] + s.p_full[x] + s.p_empty[x]:
            b.init, b.arr, b.done = True, 0, 0
        s.inited[x] = True
        yield True

    def start(s, x):  # __syncthreads (own init) + barrier.cluster (both)
        while not s.inited[x]:
            yield False
        if s.m != 'no_cluster_sync':
            while not (s.inited[0] and s.inited[1]):
                yield False

    def producer(s, x, pw):
        yield from s.start(x)
        peer = 1 - x
        for t in range(s.n):
            st, use = t % 2, t // 2
            if use > 0 and s.m != 'no_empty_wait':
                yield from s.wait(s.empty[x][st], use - 1)
            yield True
            rst = 1 - st if s.m == 'remote_full_wrong_stage' else st

            def arrive():
                s.full[x][st].arrive(s, 32)
                if s.m != 'no_remote_full':
                    s.remote_arrive(peer, s.full[peer][rst], 32, ('P', x, pw))
            if s.m == 'arrive_before_store':
                arrive()
                yield True
            for y in (x, peer):  # pieces in any order; local then remote as the code
                s.write_part('stage', y, st, x, pw, t, ('P', x, pw))
                s.write_part('pchunk', y, st, x, pw, ('rope', t), ('P', x, pw))
                yield True
            if s.m != 'arrive_before_store':
                arrive()
            yield True

    def consumer(s, x, w):
        yield from s.start(x)
        peer = 1 - x
        other = 1 - w
        n = s.n

        def release(t):
            st = t % 2
            if t + 2 >= n and s.m != 'release_last':
                return
            s.empty[x][st].arrive(s, 4)
            if s.m != 'no_remote_empty' and s.m != 'empty_count_local':
                s.remote_arrive(peer, s.empty[peer][st], 4, ('C', x, w))

        def begin_other(t, b):
            yield from s.wait(s.p_full[x][b], t // 2)
            st = t % 2
            yield from s.wait(s.full[x][st], t // 2)
            s.rbegin('stage', x, st, ('c', w, 'pv', t), t)
            if s.am[x][b] != t:
                s.err(('stale factors', x, b, t))
            for rank in range(2):
                for pw in range(PRODUCER_WARPS):
                    if s.pchunk[x][st][rank][pw] != ('P', t):
                        s.err(('stale P', x, st, t))
            s.readers.setdefault(('pchunk', x, st), set()).add(('c', w, 'pvP', t))

        def end_other(t, b):
            yield True
            st = t % 2
            s.rend('stage', x, st, ('c', w, 'pv', t), t)
            s.readers[('pchunk', x, st)].discard(('c', w, 'pvP', t))
            release(t)
            s.p_empty[x][b].arrive(s, 4)

        i = 0
        while 2 * i < n:
            t_own = 2 * i + w
            own = t_own < n
            t_other = 2 * i + other
            if own:
                st = t_own % 2
                if not (s.m == 'consumer_no_full_wait' and w == 0):
                    yield from s.wait(s.full[x][st], t_own // 2)
                s.rbegin('stage', x, st, ('c', w, 'S'), t_own)
                s.rbegin('pchunk', x, st, ('c', w, 'Srope'), ('rope', t_own))
                yield True
                s.rend('stage', x, st, ('c', w, 'S'), t_own)
                s.rend('pchunk', x, st, ('c', w, 'Srope'), ('rope', t_own))
            if w == 1:
                yield from begin_other(t_other, other)
                yield True
                yield from end_other(t_other, other)
            if own:
                if i > 0:
                    yield from s.wait(s.p_empty[x][w], i - 1)
                yield True
                st = t_own % 2
                for rank in range(2):
                    for pw in range(PRODUCER_WARPS):
                        s.write_part('pchunk', x, st, rank, pw, ('P', t_own), ('C', x, w))
                s.am[x][w] = t_own
                s.p_full[x][w].arrive(s, 128)
                s.rbegin('stage', x, st, ('c', w, 'rs'), t_own)
                yield True
                s.rend('stage', x, st, ('c', w, 'rs'), t_own)
                release(t_own)
            if w == 0 and t_other < n:
                yield from begin_other(t_other, other)
                yield True
                yield from end_other(t_other, other)
            i += 1

    def run(s, max_steps=200000):
        agents = {}
        for x in range(2):
            agents[('init', x)] = s.init(x)
            for pw in range(PRODUCER_WARPS):
                agents[('P', x, pw)] = s.producer(x, pw)
            for w in range(2):
                agents[('C', x, w)] = s.consumer(x, w)
        blocked = set()
        steps = 0
        while agents:
            ready = [a for a in sorted(agents) if a not in blocked]
            if not ready:
                s.err(('hang', sorted(agents)))
                break
            a = s.rng.choice(ready)
            try:
                progressed = next(agents[a])
            except StopIteration:
                del agents[a]
                progressed = True
                for x in range(2):  # a CTA exits when all its agents have
                    if not any(k[1] == x for k in agents):
                        s.exited[x] = True
            if progressed:
                blocked.clear()
            else:
                blocked.add(a)
            steps += 1
            if steps > max_steps:
                s.err(('step limit', sorted(agents)))
                break
            if s.errors:
                break
        return s.errors


def protocol(n_runs, mutant=None, stop_early=False):
    bad = []
    for n in range(10):
        for seed in range(n_runs):
            errs = Sim(n, random.Random(seed * 7919 + n * 31 + 1), mutant).run()
            if errs:
                bad.append((n, seed, errs[:2]))
                if stop_early:
                    return bad
    return bad


def main():
    ok = True
    lerr = layout_check()
    print('layout (2 CTAs x 4 warps x 32 lanes x 9 pieces, valid rows 64/1/31/32/33/40/63):',
          'ok' if not lerr else 'FAIL %s' % (lerr[:5],))
    ok &= not lerr
    global LAYOUT_MUTANT
    for lm in ('no_swap', 'same_row', 'rope_row'):
        LAYOUT_MUTANT = lm
        e = layout_check((64, 33))
        print('layout mutant %-10s' % lm, 'caught: %s' % (e[0][:2],) if e else 'NOT CAUGHT')
        ok &= bool(e)
    LAYOUT_MUTANT = None
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    bad = protocol(runs)
    print('protocol, the kernel (tiles 0..9, %d schedules each):' % runs,
          'ok' if not bad else 'FAIL %d runs, e.g. %s' % (len(bad), bad[:2]))
    ok &= not bad
    for m, what in MUTANTS.items():
        if m is None:
            continue
        bad = protocol(runs, m, stop_early=True)
        caught = bool(bad)
        print('mutant %-24s %-58s %s' % (m, what,
              'caught: %s' % (bad[0][2][0][:2],) if caught else 'NOT CAUGHT'))
        ok &= caught
    print('summary:', 'all ok' if ok else 'FAILURES')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
