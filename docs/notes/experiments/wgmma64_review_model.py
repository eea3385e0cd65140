#!/usr/bin/env python3
"""Independent host model of wgmma_rows64.h's shared-memory data paths (reviewer's, not the author's).

Writer side: simulates the kernel's code literally (lane/warp loops, shfl sources, decode16 byte
routing, sw128_offset, stmatrix lane->address rules, pf packing), labelling every f16 slot with
its logical source.  Reader side: decodes the 64-bit descriptors exactly as the kernel builds them
(sw128_desc + the 64-bit "desc + off" additions) and reads them through the PTX ISA canonical
layouts (128-bit-element units; SW128: addr bits [4:6] ^= bits [7:9] of the absolute smem address,
base_offset 0, atoms 1024-aligned), for K-major (trans 0) and MN-major (trans 1) operands.
Then checks the algebra: S[m][n] = sum_d Q[m][d] K[n][d] over all 576 dims exactly once, and
O_w[m][n] = sum_tok P[m][tok] V[tok][256w+n] for both the RS (own P) and SS (other's P) products,
the softmax mask's token index, and the epilogue's column -> dim mapping.

Run: python3 wgmma64_review_model.py            (all checks, must print OK)
     python3 wgmma64_review_model.py --mutants  (each deliberate one-constant change must FAIL)
"""
import sys, itertools

# ---------------- kernel constants (Rows64Config) ----------------
kC = 8192; kChunks = 9; kRopeChunk = 8; kTileBytes = kChunks * kC
kOffQ = 0; kOffStages = kOffQ + kChunks * kC

def build(M):
    """M: dict of knobs; default = the kernel as written. Returns list of failures."""
    fails = []
    def check(cond, msg):
        if not cond:
            fails.append(msg)
            if len(fails) > 5: raise StopIteration
    def sw128_offset(r, j):
        return r * 128 + ((j ^ (r & 7)) << 4)
    def sw128_desc(addr, lbo, sbo):
        d = (addr >> 4) & 0x3fff
        d |= ((lbo >> 4) & 0x3fff) << 16
        d |= ((sbo >> 4) & 0x3fff) << 32
        d |= M.get('layout', 1) << 62
        return d
    def hw_swz(a):  # 128B swizzle of the absolute shared address
        return a ^ (((a >> M.get('swz_src', 7)) & 7) << 4)
    def decode_desc(d):
        start = (d & 0x3fff) << 4
        lbo = ((d >> 16) & 0x3fff) << 4
        sbo = ((d >> 32) & 0x3fff) << 4
        base_off = (d >> 49) & 7
        layout = (d >> 62) & 3
        assert base_off == 0 and layout == 1, hex(d)
        return start, lbo, sbo
    def hw_kmajor(d, mn, k):  # 16-bit element (mn, k), k < 16, K-major SW128
        start, lbo, sbo = decode_desc(d)
        a = start + (mn % 8) * 128 + (mn // 8) * sbo + 16 * (k // 8) + 2 * (k % 8)
        return hw_swz(a)
    def hw_mnmajor(d, mn, k):  # 16-bit element (mn, k), MN-major SW128 (trans = 1)
        start, lbo, sbo = decode_desc(d)
        a = start + 2 * (mn % 64) + (mn // 64) * lbo + (k % 8) * 128 + (k // 8) * sbo
        return hw_swz(a)
    def hw_B(d, trans, n, k):
        return hw_mnmajor(d, n, k) if trans else hw_kmajor(d, n, k)

    for smem_base in (0, 1024, 4096):
        mem = {}
        def st(addr, label):
            check(addr % 2 == 0, 'odd addr')
            check(addr not in mem or mem[addr] == label, ('overwrite', addr, mem.get(addr), label))
            mem[addr] = label
        q_base = smem_base + kOffQ
        # ---------------- write_q ----------------
        kPieces = 72
        for cw in range(8):
            for r in range(cw, 64, 8):
                for lane in range(32):
                    for i in range(3):
                        piece = lane + 32 * i
                        if piece >= kPieces: continue
                        # w[e] = dims (8 piece + 2e, +1), low half first; f[e] = pack(lo, hi)
                        for e in range(4):
                            for half in range(2):
                                dim = 8 * piece + 2 * e + half
                                addr = q_base + (piece // 8) * kC + sw128_offset(r, piece % 8 ^ M.get('q_gran_xor', 0)) + 4 * e + 2 * half
                                st(addr, ('Q', r, dim))
        # ---------------- producer, one tile per stage ----------------
        def decode16_route(hardware):
            """f16 slot s (0..7 words x 2 halves) -> code byte index 0..15 of the 16-byte load."""
            route = {}
            for k in range(4):
                wbytes = [4 * k + b for b in range(4)]
                if hardware:
                    # e4m3x2_lo_to_f16x2: mov {l,h}; cvt.rn.f16x2.e4m3x2 d, l: l's byte0 -> low half
                    lo = (wbytes[0], wbytes[1]); hi = (wbytes[2], wbytes[3])
                else:
                    sel = M.get('perm', 0x3120)
                    perm = [wbytes[(sel >> (4 * i)) & 0xf] for i in range(4)]
                    # decode_fp8x4(x): lo = (x.b0, x.b2), hi = (x.b1, x.b3)
                    lo = (perm[0], perm[2]); hi = (perm[1], perm[3])
                route[(2 * k, 0)], route[(2 * k, 1)] = lo
                route[(2 * k + 1, 0)], route[(2 * k + 1, 1)] = hi
            return route
        for hardware in (True, False):
            route = decode16_route(hardware)
            tmem = dict(mem)
            def tst(addr, label):
                check(addr not in tmem or tmem[addr] == label, ('tile overwrite', addr, tmem.get(addr), label))
                tmem[addr] = label
            stage = 1
            tile = smem_base + kOffStages + stage * kTileBytes
            for pw in range(4):
                # each lane's row address: my_row = 16 pw + (lane & 15)
                my_row = [16 * pw + (l & 15) for l in range(32)]
                for lane in range(32):
                    c, q = lane >> 2, lane & 3
                    cc = c
                    # latent: data[k] from row of lane rr = (k + cc) & 15, bytes 16 lane ..
                    data = {}
                    for k in range(16):
                        rr = (k + cc) & 15
                        data[k] = [('K', my_row[rr], 16 * lane + b) for b in range(16)]  # code byte b = dim 16 lane + b
                    rope = {}
                    for k in range(2):
                        rr = 8 * k + cc
                        rope[k] = [('K', my_row[rr], 512 + 16 * q + b) for b in range(16)]
                    my_tile = tile + 16 * pw * 128
                    for k in range(18):
                        is_rope = k >= 16
                        row = 8 * (k - 16) + cc if is_rope else (k + cc) & 15
                        chunk = my_tile + (kRopeChunk if is_rope else cc) * kC
                        src = rope[k - 16] if is_rope else data[k]
                        for half16 in range(2):  # store16 of f[0..3] at granule 2q, f[4..7] at 2q+1
                            g = 2 * q + half16 + M.get('gran_off', 0)
                            base = chunk + sw128_offset(row, g)
                            for wi in range(4):
                                for h in range(2):
                                    code = src[route[(4 * half16 + wi, h)]]
                                    tst(base + 4 * wi + 2 * h, code)
            # ---------------- S = Q K^T: 36 SS m64n64k16, A = Q (K-major), B = K (K-major) -------
            q_desc = sw128_desc(q_base, 16, 1024)
            k_desc = sw128_desc(smem_base + kOffStages + stage * kTileBytes, 16, M.get('k_sbo', 1024))
            S = {}
            for ks in range(36):
                off = ((ks // 4) * kC + M.get('kstep', 32) * (ks % 4)) >> 4
                qd, kd = q_desc + off, k_desc + off
                check((qd & 0x3fff) == (q_desc & 0x3fff) + off, 'carry out of start field')
                check((kd & 0x3fff) == (k_desc & 0x3fff) + off, 'carry out of start field')
                for k in range(16):
                    for m in range(64):
                        a = tmem.get(hw_kmajor(qd, m, k))
                        check(a is not None and a[0] == 'Q' and a[1] == m, ('A(Q) not Q row', ks, m, k, a))
                    for n in range(64):
                        b = tmem.get(hw_B(kd, M.get('trans_s', 0), n, k))
                        check(b is not None and b[0] == 'K' and b[1] == n, ('B(K) token', ks, n, k, b))
                    # pairing: the k-th product of step ks multiplies Q[m][dq] with K[n][dk]: dq == dk
                    dq = tmem[hw_kmajor(qd, 0, k)][2]
                    for m in (0, 9, 37, 63):
                        check(tmem[hw_kmajor(qd, m, k)][2] == dq, 'Q dim differs across rows')
                    for n in (0, 9, 37, 63):
                        check(tmem[hw_B(kd, M.get('trans_s', 0), n, k)][2] == dq, ('dim mismatch Q vs K', ks, k, n))
                    S.setdefault(dq, 0); S[dq] += 1
            check(sorted(S) == list(range(576)) and set(S.values()) == {1}, 'S does not cover 576 dims once')
            # ---------------- P: S accumulator -> pf -> RS A fragment, and stmatrix -> SS A -------
            # D (f32, m64nN): warp wq, lane (g,t): d[4j+2h+c] = D[16wq+g+8h][8j+2t+c]
            def d_rc(wq, lane, i):
                g, t = lane >> 2, lane & 3
                return 16 * wq + g + 8 * ((i >> 1) & 1), 8 * (i >> 2) + 2 * t + (i & 1)
            # RS A (16-bit): a0=A[g][2t,2t+1], a1=A[g+8][..], a2=A[g][2t+8,..], a3=A[g+8][2t+8,..]
            def a_rc(wq, lane, reg, half):
                g, t = lane >> 2, lane & 3
                return 16 * wq + g + 8 * (reg & 1), 2 * t + half + 8 * (reg >> 1)
            pmem = {}
            pchunk = smem_base + kOffStages + stage * kTileBytes + kRopeChunk * kC
            for wq in range(4):
                pf = {}
                for lane in range(32):
                    g, t4 = lane >> 2, lane & 3
                    # softmax mask token of s[k] must be the D column
                    for k in range(32):
                        tok = 8 * (k >> 2) + 2 * t4 + (k & 1)
                        row_h = 16 * wq + g + 8 * ((k >> 1) & 1)
                        check(d_rc(wq, lane, k) == (row_h, tok), 'mask token / row of s[k]')
                    for k in range(0, 32, 2):
                        kk, reg = k // 8, (k % 8) // 2 + M.get('pf_shift', 0) % 4 * 0
                        if M.get('pf_swap'): reg = [0, 2, 1, 3][reg]
                        pf[(lane, kk, reg)] = (d_rc(wq, lane, k), d_rc(wq, lane, k + 1))  # (lo, hi)
                # RS: register reg of k-step kk holds A[m][16kk + col]
                for lane in range(32):
                    for kk in range(4):
                        for reg in range(4):
                            lo, hi = pf[(lane, kk, reg)]
                            for half, src in ((0, lo), (1, hi)):
                                m, kcol = a_rc(wq, lane, reg, half)
                                check(src == (m, 16 * kk + kcol), ('RS A frag', wq, lane, kk, reg, half, src))
                # stmatrix x4 (non-trans): lanes 8i..8i+7 give row addresses of matrix i;
                # register i of lane (g,t) = matrix i row g, elements 2t (lo), 2t+1 (hi)
                for kk in range(4):
                    addr = {}
                    for lane in range(32):
                        mi, r = lane >> 3, lane & 7
                        prow = 16 * wq + 8 * (mi & 1) + r
                        addr[(mi, r)] = pchunk + sw128_offset(prow, 2 * kk + (mi >> 1) + M.get('p_gran', 0))
                    for lane in range(32):
                        g, t = lane >> 2, lane & 3
                        for i in range(4):
                            lo, hi = pf[(lane, kk, i)]
                            a = addr[(i, g)]
                            check(a % 16 == 0, 'stmatrix row addr not 16B aligned')
                            for half, src in ((0, lo), (1, hi)):
                                pmem[a + 2 * (2 * t + half)] = ('P',) + src
            check(len(pmem) == 64 * 64, ('P coverage', len(pmem)))
            # ---------------- O += P V, both consumers ----------------
            for w in range(2):
                tile_addr = smem_base + kOffStages + stage * kTileBytes
                a_desc = sw128_desc(tile_addr + kRopeChunk * kC, 16, 1024)
                v_desc = sw128_desc(tile_addr + 4 * w * kC, M.get('v_lbo', kC), M.get('v_sbo', 1024))
                for kk in range(4):
                    vd = v_desc + ((M.get('v_kstep', 2048) * kk) >> 4)
                    ad = a_desc + ((32 * kk) >> 4)
                    for k in range(16):
                        tok = None
                        # SS A = P from the rope chunk (K-major)
                        for m in range(64):
                            p = pmem.get(hw_kmajor(ad, m, k))
                            check(p is not None and p[1] == m, ('SS A P row', w, kk, m, k, p))
                            if p is None: continue
                            tok = p[2] if tok is None else tok
                            check(p[2] == tok, 'P token differs across rows')
                        # RS A: column k of step kk is token 16kk + k (checked above); SS must agree
                        check(tok == 16 * kk + k, ('SS P token', tok, kk, k))
                        for n in range(256):
                            v = tmem.get(hw_B(vd, M.get('trans_v', 1), n, k))
                            check(v is not None and v[0] == 'K' and v[1] == tok and v[2] == 256 * w + n,
                                  ('V', w, kk, n, k, v))
                # epilogue: o[4j+2h+e] (D col 8j+2t+e of n=256) -> dst + 256 w + 2 t4 + 8 j + e
                for lane in range(32):
                    t4 = lane & 3
                    for j in range(32):
                        for h in range(2):
                            for e in range(2):
                                i = 4 * j + 2 * h + e
                                col = d_rc(0, lane, i)[1]
                                dim_store = 256 * w + 2 * t4 + 8 * j + e
                                check(256 * w + col == dim_store, 'epilogue dim')
                                check(d_rc(0, lane, i)[0] == (lane >> 2) + 8 * h, 'epilogue row')
            # alignment of atoms
            for base in (q_base, smem_base + kOffStages, smem_base + kOffStages + kTileBytes):
                check(base % 1024 == 0, 'atom base not 1024-aligned')
            check((smem_base + kOffStages + 2 * kTileBytes) >> 4 < (1 << 14), 'start address field overflow')
    return fails

def fnuz_check():
    """decode16's e4m3fnuz path vs the true e4m3fnuz values / 128 (kScale), all 256 codes."""
    def fnuz(c):
        if c == 0x80: return None
        s = -1.0 if c & 0x80 else 1.0; e = (c >> 3) & 15; m = c & 7
        return s * (2.0 ** (e - 8) * (1 + m / 8) if e else 2.0 ** (-7) * (m / 8))
    def f16(bits):
        s = -1.0 if bits & 0x8000 else 1.0; e = (bits >> 10) & 31; m = bits & 1023
        return s * (2.0 ** (e - 15) * (1 + m / 1024) if e else 2.0 ** (-14) * (m / 1024))
    def decode_fp8x4(w):
        lo = ((w & 0x007f007f) << 7) | ((w << 8) & 0x80008000)
        hi = ((w & 0x7f007f00) >> 1) | (w & 0x80008000)
        return lo & 0xffffffff, hi & 0xffffffff
    def byte_perm(a, b, sel):
        by = [(a >> (8 * i)) & 255 for i in range(4)] + [(b >> (8 * i)) & 255 for i in range(4)]
        return sum(by[(sel >> (4 * i)) & 7] << (8 * i) for i in range(4))
    bad = 0
    for c0 in range(256):
        codes = [c0, (c0 * 7 + 3) & 255, (c0 * 13 + 5) & 255, (c0 * 29 + 11) & 255]
        w = sum(codes[i] << (8 * i) for i in range(4))
        lo, hi = decode_fp8x4(byte_perm(w, 0, 0x3120))
        outs = [lo & 0xffff, lo >> 16, hi & 0xffff, hi >> 16]  # dims 0,1 (f[2k]) then 2,3 (f[2k+1])
        for i in range(4):
            tv = fnuz(codes[i])
            if tv is None: continue
            if f16(outs[i]) * 128.0 != tv: bad += 1
    return bad

if __name__ == '__main__':
    base = {}
    try:
        f = build(base)
    except StopIteration:
        f = ['(stopped)']
    bad = fnuz_check()
    print('fnuz decode mismatches:', bad)
    if f or bad:
        print('FAIL', f[:6]); sys.exit(1)
    print('OK: Q (64x576), K and V views of the f16 tile (64x576, both decoders), S dim pairing '
          '(36 steps x 16), P (64x64) via RS fragments and stmatrix/SS, V (2 x 4 x 16 x 256), epilogue')
    if '--mutants' in sys.argv:
        mutants = {
            'K SBO 512': {'k_sbo': 512}, 'k-step 16 B': {'kstep': 16}, 'V LBO 1024': {'v_lbo': 1024},
            'V SBO 8192 (LBO/SBO swapped)': {'v_lbo': 1024, 'v_sbo': kC}, 'V k-step 1024': {'v_kstep': 1024},
            'V read K-major (trans 0)': {'trans_v': 0}, 'K read MN-major (trans 1)': {'trans_s': 1},
            'swizzle from bits 8..10': {'swz_src': 8}, 'layout type 2 (64B)': {'layout': 2},
            'fnuz perm 0x3210': {'perm': 0x3210}, 'producer granule +1': {'gran_off': 1},
            'pf regs 1<->2': {'pf_swap': True}, 'stmatrix granule +1': {'p_gran': 1},
            'Q granule ^1': {'q_gran_xor': 1},
        }
        allfail = True
        for name, knobs in mutants.items():
            try:
                r = build(knobs)
            except (StopIteration, AssertionError) as e:
                r = ['raised ' + type(e).__name__]
            print(('caught ' if r else 'MISSED ') + name, (str(r[0])[:90] if r else ''))
            allfail &= bool(r)
        print('all mutants caught' if allfail else 'SOME MUTANT MISSED'); sys.exit(0 if allfail else 1)
