#!/usr/bin/env python3
"""Reviewer's host model of rows64_producer (exp_rows64_pipe.patch), independent of the author's.

Simulates the producer warpgroup literally, lane by lane and statement by statement:
publish_rows (cache_slot with a bounds-checked page table), load_latent (the row pointer read
from next_rows, lane l bytes 16 l of row (k + 4 (l >> 3)) & 15), load_rope (cp.async, src-size
0 for missing rows), store_and_load (odd-chunk lanes swap their words and store the odd granule
first, decode16 of e4m3fn (cvt pairs) and e4m3fnuz (byte_perm 0x3120 + decode_fp8x4), refill
of data[k] right after its conversion), the tile loop and the final cp.async.wait_all.

Checks:
  A. every byte of every valid row of every tile lands exactly once at its swizzled f16 slot
     (chunk d / 64, row r at 128 r, granule j at (j ^ (r & 7)) * 16), with the exact value
     (fn: the e4m3fn value; fnuz: the e4m3fnuz value / 128); missing rows are zeros; nothing
     in the stage is left unwritten;
  B. each STS.128 is bank-conflict free per quarter warp (8 lanes, 8 distinct 16-byte bank
     groups); also reports the rope staging reads (LDS.128, 32-byte lane stride);
  C. ordering: next_rows (a write by one lane, reads by others: a __syncwarp between every
     conflicting pair, and each read sees the pointer of the tile it loads), the rope staging
     (cp.async results read only after a wait_all, a thread's cp.async issued after its reads
     of the previous tile in program order, and the result independent of when each cp.async
     lands between its issue and the next wait_all), the register refill (data[k] of tile t
     is converted before it is overwritten);
  D. no global read of a missing row, no page-table read past the element's pages, no cache
     row read outside the cache; loads past the last tile read nothing.
Variants: the patch as given, and v2 (exp_rows64_pipe_v2.patch): latent piece 15 staged by
cp.async with the rope (48 bytes a thread), and the warp's row cursor in shared memory (lane 0
writes it, __syncwarp, every lane reads it in publish_rows).
Cases: n_tiles 1, 2, 3, 4, 5; token counts not a multiple of 64; nonzero tok_begin (splits);
contiguous and paged caches (page sizes 1, 16, 64, 48), page tables exactly as long as needed.

Run: python3 rows64_pipe_review_model.py             (all checks; prints OK)
     python3 rows64_pipe_review_model.py --mutants   (each deliberate change must FAIL)
"""
import random
import struct
import sys

kC = 8192       # chunk bytes: 64 rows x 128 bytes
kChunks = 9
kTileBytes = kChunks * kC
kRopeChunk = 8
kTileTokens = 64
kLatentLoads, kRopeLoads = 16, 2


def f16_value(bits):
    return struct.unpack('<e', struct.pack('<H', bits))[0]


def e4m3(code, fnuz):
    """Reference value of an e4m3fn / e4m3fnuz code (None: NaN)."""
    s = -1.0 if code & 0x80 else 1.0
    e, m = (code >> 3) & 15, code & 7
    if fnuz:
        if code == 0x80:
            return None
        bias = 8
    else:
        if (code & 0x7f) == 0x7f:
            return None
        bias = 7
    if e == 0:
        return s * m / 8.0 * 2.0 ** (1 - bias)
    return s * (1 + m / 8.0) * 2.0 ** (e - bias)


def cvt_e4m3x2_f16x2(h16):
    """cvt.rn.f16x2.e4m3x2: byte 0 -> low half, byte 1 -> high half, exact (NaN -> 0x7fff)."""
    out = 0
    for i in range(2):
        code = (h16 >> (8 * i)) & 0xff
        v = e4m3(code, False)
        bits = 0x7fff if v is None else struct.unpack('<H', struct.pack('<e', v))[0]
        out |= bits << (16 * i)
    return out


def byte_perm(a, b, sel):
    src = a | (b << 32)
    return sum(((src >> (8 * ((sel >> (4 * i)) & 7))) & 0xff) << (8 * i) for i in range(4))


def decode_fp8x4(w):
    lo = ((w & 0x007f007f) << 7) | ((w << 8) & 0x80008000)
    hi = ((w & 0x7f007f00) >> 1) | (w & 0x80008000)
    return lo & 0xffffffff, hi & 0xffffffff


def decode16(words, fnuz, M):
    f = []
    for w in words:
        if not fnuz:
            f += [cvt_e4m3x2_f16x2(w & 0xffff), cvt_e4m3x2_f16x2(w >> 16)]
        else:
            lo, hi = decode_fp8x4(byte_perm(w, 0, M.get('perm', 0x3120)))
            f += [lo, hi]
    return f


class Fail(Exception):
    pass


def run_case(case, fnuz, M, report):
    """Simulate one CTA's producer over all tiles; returns list of failure strings."""
    fails = report['fails'] = []

    def check(cond, msg):
        if not cond:
            fails.append(msg)
            if len(fails) > 8:
                raise Fail()

    rng = random.Random(case['seed'])
    tok_begin, tok_end = case['tok_begin'], case['tok_end']
    n_tiles = (tok_end - tok_begin + kTileTokens - 1) // kTileTokens
    kv_len = case['kv_len']
    paged = case.get('page_size') is not None
    # ---- the element's cache: slots (rows) of 512 latent + 64 rope codes ----
    if paged:
        ps = case['page_size']
        n_pages = (kv_len + ps - 1) // ps
        pool = list(range(n_pages + 3))
        rng.shuffle(pool)
        page_indices = [0] * 5 + pool[:n_pages]   # element's pages start at indptr[b] = 5
        indptr_b = 5
        n_slots = (n_pages + 3) * ps
        kv_begin = 0
    else:
        kv_begin = case.get('kv_begin', 7)
        n_slots = kv_begin + kv_len
    kv_stride, kpe_stride = 656, 80    # bytes, > 512 / 64 and 16-aligned
    latent = {s: bytes(rng.randrange(256) for _ in range(512)) for s in range(n_slots)}
    rope = {s: bytes(rng.randrange(256) for _ in range(64)) for s in range(n_slots)}
    KV, KPE = 1 << 40, 1 << 44          # base addresses of the two arrays

    def cache_slot(tok):
        if not paged:
            return kv_begin + tok
        t = tok
        idx = indptr_b + t // ps
        check(0 <= idx < len(page_indices), ('page table read past its end', idx))
        if not 0 <= idx < len(page_indices):
            return 0
        return page_indices[idx] * ps + t % ps

    def gread(addr, n, what, row_valid):
        """A global read of n bytes at addr: must be inside one cache row of a valid row."""
        check(row_valid, ('global read of a missing row', what))
        if KV <= addr < KPE:
            s, off = divmod(addr - KV, kv_stride)
            check(0 <= s < n_slots and off + n <= 512, ('latent read out of bounds', s, off))
            return latent.get(s, bytes(512))[off:off + n]
        s, off = divmod(addr - KPE, kpe_stride)
        check(0 <= s < n_slots and off + n <= 64, ('rope read out of bounds', s, off))
        return rope.get(s, bytes(64))[off:off + n]

    # ---- shared state of the producer ----
    reg = M.get('reg_pieces', 16)     # latent pieces held in registers; the rest are staged
    n_staged = 16 - reg + kRopeLoads
    shared = {}                       # (pw, name) -> value: next_rows slots, v2's row cursor
    nr_log = {}                       # (pw, name) -> list of (epoch, lane, 'W'/'R')
    rope_stage = {}                   # (pw, lane) -> 16 n_staged bytes (landed)
    pending = {}                      # (pw, lane) -> list of (offset, bytes) cp.async in flight
    epoch = [0] * 4                   # __syncwarp count per warp
    stages = [bytearray(kTileBytes) for _ in range(2)]
    writes = [None, None]
    expected_tile_of_stage = [None, None]
    n_zero_cp = [0]
    land_early = M.get('land_early', False)

    def nr_access(pw, lane, idx, kind, value=None):
        """A shared-memory access of the warp's producer-private words (next_rows slot idx,
        or v2's row cursor): conflicting accesses of two lanes need a __syncwarp between."""
        key = (pw, idx)
        log = nr_log.setdefault(key, [])
        for (ep, ln, kd) in log:
            if ln != lane and 'W' in (kd, kind):
                check(ep != epoch[pw], ('shared race', pw, idx, kd, kind, ep))
        log.append((epoch[pw], lane, kind))
        if kind == 'W':
            shared[key] = value
        return shared.get(key)

    def syncwarp(pw):
        epoch[pw] += 1
        for key in list(nr_log):
            if key[0] == pw:
                nr_log[key] = [e for e in nr_log[key] if e[0] >= epoch[pw] - 1]

    def cp_async(pw, lane, off, src, valid, what):
        n = 16 if valid else 0
        data = gread(src, 16, what, True) if n else b''
        if not n:
            n_zero_cp[0] += 1
        data = data + bytes(16 - len(data))
        if land_early:
            buf = bytearray(rope_stage.get((pw, lane), bytes(16 * n_staged)))
            buf[off:off + 16] = data
            rope_stage[(pw, lane)] = bytes(buf)
        else:
            pending.setdefault((pw, lane), []).append((off, data))

    def wait_all(pw, lane):
        buf = bytearray(rope_stage.get((pw, lane), bytes(16 * n_staged)))
        for off, data in pending.pop((pw, lane), []):
            buf[off:off + 16] = data
        rope_stage[(pw, lane)] = bytes(buf)

    def rope_read(pw, lane, off):
        check(not pending.get((pw, lane)), ('rope staging read with a cp.async in flight', pw))
        return rope_stage.get((pw, lane), bytes(16 * n_staged))[off:off + 16]

    # ---- the producer's lambdas, per warp, all 32 lanes statement by statement ----
    def write_state(pw):
        """v2: lane 0 writes the warp's row cursor, then __syncwarp."""
        nr_access(pw, 0, 'cursor', 'W', (tok_begin + 16 * pw, tok_end))
        if not M.get('no_state_sync'):
            syncwarp(pw)

    def publish_rows(pw, t):
        tile_tok0 = tok_begin + t * kTileTokens
        valid = min(kTileTokens, tok_end - tile_tok0)
        for lane in range(32):
            r = lane & 15
            if M.get('state'):            # v2: rem = tok_end - (tok0 + 64 t), r < rem
                tok0, end = nr_access(pw, lane, 'cursor', 'R')
                row_valid = r < end - (tok0 + 64 * t)
                check(row_valid == (16 * pw + r < valid), 'v2 row validity differs')
            else:
                row_valid = 16 * pw + r < valid
            slot = cache_slot(tile_tok0 + 16 * pw + r) if row_valid else 0
            if not row_valid and M.get('slot_no_guard'):
                slot = cache_slot(tile_tok0 + 16 * pw + r)
            ptr = KV + slot * kv_stride if lane < 16 else KPE + slot * kpe_stride
            nr_access(pw, lane, 2 * r + (lane >> 4), 'W', (ptr, row_valid, t))
        if not M.get('no_publish_sync'):
            syncwarp(pw)
        if M.get('state'):
            v2 = min(kTileTokens - 16 * pw, tok_end - (tok_begin + 16 * pw + 64 * t))
            for r in range(16):
                check((r < v2) == (r < valid - 16 * pw), 'v2 valid_here differs')
            return v2
        return valid - 16 * pw

    def load_latent(pw, lane, data, valid_here, k, cc, t_expect):
        rr = (k + 4 * (cc >> 1)) & 15
        ptr, row_valid, t_ptr = nr_access(pw, lane, 2 * rr, 'R')
        if rr < valid_here:
            check(t_ptr == t_expect, ('stale latent row pointer', pw, lane, k, t_ptr, t_expect))
            b = gread(ptr + 16 * lane, 16, ('latent', t_expect, pw, rr), row_valid)
            data[lane][k] = list(struct.unpack('<4I', b))
        else:
            data[lane][k] = [0, 0, 0, 0]

    def load_rope(pw, lane, valid_here, cc, t_expect):
        """The staged copies: latent pieces reg .. 15 (v2: 15), then the 2 rope pieces."""
        q = lane & 3
        for k in range(reg, kLatentLoads):
            rr = (k + 4 * (cc >> 1)) & 15
            ptr, row_valid, t_ptr = nr_access(pw, lane, 2 * rr, 'R')
            if rr < valid_here:
                check(t_ptr == t_expect, ('stale latent row pointer', pw, lane, k))
            cp_async(pw, lane, 16 * (k - reg), ptr + 16 * lane, rr < valid_here,
                     ('latent', t_expect, rr))
        for k in range(kRopeLoads):
            rr = 8 * k + cc
            ptr, row_valid, t_ptr = nr_access(pw, lane, 2 * rr + 1, 'R')
            if rr < valid_here:
                check(t_ptr == t_expect, ('stale rope row pointer', pw, lane, k))
            cp_async(pw, lane, 16 * (16 - reg + k), ptr + 16 * q, rr < valid_here,
                     ('rope', t_expect, rr))

    def sts(stage, pw_lane_addrs, tile_t):
        """One STS.128 instruction of a warp: list of (lane, addr, 4 words)."""
        groups = {}
        for lane, addr, words in pw_lane_addrs:
            check(addr % 16 == 0, 'misaligned STS.128')
            groups.setdefault(lane // 8, []).append((addr // 16) % 8)
            for i, w in enumerate(words):
                struct.pack_into('<I', stages[stage], addr + 4 * i, w)
            g = addr // 16
            writes[stage][g] = writes[stage].get(g, 0) + 1
        for qw, banks in groups.items():
            check(len(set(banks)) == len(banks), ('bank conflict', qw, sorted(banks)))

    def store_and_load(pw, stage, data, next_valid_here, t):
        my_tile = 16 * pw * 128
        if not M.get('no_wait_all'):
            for lane in range(32):
                wait_all(pw, lane)
        if M.get('rope_copies_first'):     # the next tile's copies before this one's reads
            for lane in range(32):
                load_rope(pw, lane, next_valid_here, lane >> 2, t + 1)
        for k in range(kLatentLoads + kRopeLoads):
            rope_k = k >= kLatentLoads
            instr = [[], []]
            for lane in range(32):
                cc, q = lane >> 2, lane & 3
                row = 8 * (k - kLatentLoads) + cc if rope_k else (k + 4 * (cc >> 1)) & 15
                chunk = my_tile + (kRopeChunk if rope_k else cc) * kC
                s = 0 if rope_k or M.get('no_swap') else cc & 1
                if k >= reg:
                    v = list(struct.unpack('<4I', rope_read(pw, lane, 16 * (k - reg))))
                else:
                    v = data[lane][k]
                    check(v is not None, 'data[k] read after it was consumed')
                if s:
                    v = [v[2], v[3], v[0], v[1]]
                f = decode16(v, fnuz, M)
                g0 = 2 * q + s
                g1 = 2 * q + 1 - s
                if M.get('no_swap_store'):
                    g0, g1 = 2 * q, 2 * q + 1
                sw = M.get('swz', lambda r, j: r * 128 + ((j ^ (r & 7)) << 4))
                instr[0].append((lane, stage * kTileBytes + chunk + sw(row, g0), f[0:4]))
                instr[1].append((lane, stage * kTileBytes + chunk + sw(row, g1), f[4:8]))
                if k < reg:
                    data[lane][k] = None       # consumed: the refill below overwrites it
            sts(stage, [(l, a - stage * kTileBytes, w) for l, a, w in instr[0]], t)
            sts(stage, [(l, a - stage * kTileBytes, w) for l, a, w in instr[1]], t)
            if k < reg:
                for lane in range(32):
                    kk = k if not M.get('refill_next_k') else min(k + 1, reg - 1)
                    load_latent(pw, lane, data, next_valid_here, kk, lane >> 2, t + 1)
        if not M.get('rope_copies_first'):
            for lane in range(32):
                load_rope(pw, lane, next_valid_here, lane >> 2, t + 1)
        if not M.get('no_tail_sync'):
            syncwarp(pw)

    # ---- expected stage contents of tile t ----
    def expect_tile(t):
        exp = bytearray(kTileBytes)
        tile_tok0 = tok_begin + t * kTileTokens
        for r in range(64):
            tok = tile_tok0 + r
            if tok >= tok_end:
                continue
            slot = cache_slot(tok)
            codes = latent[slot] + rope[slot]
            for d in range(576):
                v = e4m3(codes[d], fnuz)
                off = (d // 64) * kC + r * 128 + ((((d % 64) // 8) ^ (r & 7)) << 4) + 2 * (d % 8)
                if v is None:
                    bits = None
                else:
                    bits = struct.unpack('<H', struct.pack('<e', v / (128.0 if fnuz else 1)))[0]
                    if fnuz and codes[d] == 0x00:
                        bits = 0
                exp[off:off + 2] = struct.pack('<H', 0x7fff if bits is None else bits)
        return exp

    def compare(stage, t):
        exp = expect_tile(t)
        got = stages[stage]
        for g in range(kTileBytes // 16):
            check(writes[stage].get(g, 0) == 1, ('granule written %d times' %
                                                 writes[stage].get(g, 0), t, g))
        for off in range(0, kTileBytes, 2):
            e = struct.unpack_from('<H', exp, off)[0]
            a = struct.unpack_from('<H', got, off)[0]
            if e == 0x7fff:       # NaN code: the hardware/bit decoders differ by design
                continue
            check(a == e, ('value', t, off // kC, (off % kC) // 128, hex(a), hex(e)))
            if len(fails) > 3:
                return

    # ---- the producer (4 warps interleaved tile by tile; the real order differs only by the
    #      mbarrier waits, which protect the stages, not the producer's private state) ----
    data = [[[None] * 16 for _ in range(32)] for _ in range(4)]
    if M.get('state'):
        for pw in range(4):
            write_state(pw)
    vh0 = [publish_rows(pw, 0) for pw in range(4)]
    for pw in range(4):
        for lane in range(32):
            for k in range(reg):
                load_latent(pw, lane, data[pw], vh0[pw], k, lane >> 2, 0)
        for lane in range(32):
            load_rope(pw, lane, vh0[pw], lane >> 2, 0)
        syncwarp(pw)
    for t in range(n_tiles):
        stage = t % 2
        writes[stage] = {}
        stages[stage] = bytearray(b'\xa5' * kTileBytes)   # garbage: every byte must be written
        for pw in range(4):
            nvh = publish_rows(pw, t + 1)
            if t + 1 >= n_tiles:
                check(nvh <= 0, ('valid rows past the last tile', pw, nvh))
            store_and_load(pw, stage, data[pw], nvh, t)
        compare(stage, t)
    for pw in range(4):
        for lane in range(32):
            wait_all(pw, lane)
    check(all(not v for v in pending.values()), 'cp.async in flight at exit')
    report['zero_cp'] = report.get('zero_cp', 0) + n_zero_cp[0]
    return fails


CASES = []


def add_cases():
    seed = 1
    for n_tok in (1, 17, 64, 65, 100, 128, 129, 191, 192, 255, 300):
        for tb in (0, 192):
            for paged in (None, 1, 16, 48, 64):
                if paged == 1 and n_tok > 130:
                    continue
                CASES.append(dict(seed=seed, tok_begin=tb, tok_end=tb + n_tok,
                                  kv_len=tb + n_tok + 5, page_size=paged))
                seed += 1


def bank_report(n_staged):
    """Staging reads (LDS.128 at 16 n_staged tid + 16 k): worst lanes per 16-byte bank group in
    a quarter warp (1: conflict free)."""
    out = []
    for k in range(n_staged):
        worst = 0
        for qw in range(4):
            banks = [((16 * n_staged * l + 16 * k) // 16) % 8 for l in range(8 * qw, 8 * qw + 8)]
            worst = max(worst, max(banks.count(b) for b in banks))
        out.append(worst)
    return out


def run_all(M, quick=False):
    fails = []
    report = {}
    cases = CASES[::7] if quick else CASES
    for case in cases:
        for fnuz in (False, True):
            try:
                f = run_case(case, fnuz, M, report)
            except Fail:
                f = report['fails']
            if f:
                fails.append((case, 'fnuz' if fnuz else 'fn', f[:3]))
                if quick:
                    return fails, report
    return fails, report


VARIANTS = {
    'exp_rows64_pipe.patch': {},
    'v2 (exp_rows64_pipe_v2.patch)': {'reg_pieces': 15, 'state': True},
}
MUTANTS = {
    'no word swap on odd chunks': {'no_swap': True},
    'swap data but not the granule order': {'no_swap_store': True},
    'byte_perm 0x2130': {'perm': 0x2130},
    'no __syncwarp after publish': {'no_publish_sync': True},
    'no __syncwarp at the end of store_and_load': {'no_tail_sync': True},
    'refill data[k + 1] instead of data[k]': {'refill_next_k': True},
    'slot computed for missing rows': {'slot_no_guard': True},
    'no cp.async.wait_all before the rope reads': {'no_wait_all': True},
    'next rope copies issued before the reads': {'rope_copies_first': True, 'land_early': True},
    'v2: no __syncwarp after the row cursor write': {'reg_pieces': 15, 'state': True,
                                                     'no_state_sync': True},
    'v2: refill data[k + 1]': {'reg_pieces': 15, 'state': True, 'refill_next_k': True},
    'swizzle granule j ^ (r >> 3)': {'swz': lambda r, j: r * 128 + ((j ^ ((r >> 3) & 7)) << 4)},
}

if __name__ == '__main__':
    add_cases()
    if '--mutants' in sys.argv:
        bad = 0
        for name, M in MUTANTS.items():
            fails, _ = run_all(M, quick=True)
            print('%-45s %s' % (name, 'FAIL (caught)' if fails else 'passed: NOT CAUGHT'))
            if fails:
                print('    e.g.', str(fails[0][2][0])[:90])
            bad += not fails
        print('mutants not caught:', bad)
        sys.exit(1 if bad else 0)
    bad = False
    for name, V in VARIANTS.items():
        fails, report = run_all(V)
        fails2, _ = run_all(dict(V, land_early=True))
        print('%s: %d cases x {e4m3fn, e4m3fnuz}, cp.async landing late and early: %s'
              % (name, len(CASES), 'OK' if not fails and not fails2 else 'FAILED'))
        print('  cp.async with src-size 0 (missing rows, past the last tile):', report['zero_cp'])
        n_staged = 16 - V.get('reg_pieces', 16) + kRopeLoads
        print('  staging LDS.128 worst lanes per bank group per quarter warp:',
              bank_report(n_staged))
        for f in (fails + fails2)[:5]:
            print('  FAIL', f)
        bad = bad or bool(fails or fails2)
    print('FAILED' if bad else 'OK')
    sys.exit(1 if bad else 0)
