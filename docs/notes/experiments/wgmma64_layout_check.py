# Host-only check (no GPU) of exp_wgmma64_heads_m.patch's shared-memory index math: the producer's
# f16 tile, Q and P placements read back through the PTX canonical 128-byte-swizzle layouts
# (K-major and MN-major, the descriptors the kernel builds), and the producer's store banks.
# Run: python3 docs/notes/experiments/wgmma64_layout_check.py
# Host model of wgmma_rows64.h's shared-memory layouts against the PTX canonical SW128 layouts.
import random
def swz(a): return a ^ (((a >> 7) & 7) << 4)
def sw128_offset(r, j): return r * 128 + ((j ^ (r & 7)) << 4)
kC = 8192
def kmajor(start, mn, k, sbo):       # element (mn, k) of a K-major SW128 operand, k < 16
    r, M = mn % 8, mn // 8; e, K = k % 8, k // 8
    return swz(start + r * 128 + M * sbo + 2 * e + 16 * K)
def mnmajor(start, mn, k, lbo, sbo):  # element (mn, k) of an MN-major SW128 operand
    e, j, M = mn % 8, (mn // 8) % 8, mn // 64; r, K = k % 8, k // 8
    return swz(start + 2 * e + 16 * j + M * lbo + 128 * r + K * sbo)
mem = {}
# producer: warp pw, lane l, latent load k: row (k + l/4) % 16 of the warp, piece l -> chunk l/4,
# granules 2q, 2q+1 (q = l % 4) with codes 16 l .. 16 l + 15 = dims in order
tile = 73728 * 1  # stage 0 at smem offset 73728 (after Q)
for pw in range(4):
    for l in range(32):
        c, q = l >> 2, l & 3
        for k in range(16):
            row = 16 * pw + ((k + c) & 15)
            for half in range(2):
                base = tile + 16 * pw * 128 + c * kC + sw128_offset((k + c) & 15, 2 * q + half)
                for e in range(8):
                    dim = 16 * l + 8 * half + e
                    mem[base + 2 * e] = ('K', row, dim)
        for k in range(2):
            rr = 8 * k + c
            row = 16 * pw + rr
            for half in range(2):
                base = tile + 16 * pw * 128 + 8 * kC + sw128_offset(rr, 2 * q + half)
                for e in range(8):
                    mem[base + 2 * e] = ('K', row, 512 + 16 * q + 8 * half + e)
assert len(mem) == 64 * 576, len(mem)
# S = Q K^T: B = K, K-major, N = tokens, k-step ks at start tile + (ks/4) kC + 32 (ks%4)
for ks in range(36):
    start = tile + (ks // 4) * kC + 32 * (ks % 4)
    for n in range(64):
        for k in range(16):
            assert mem[kmajor(start, n, k, 1024)] == ('K', n, 16 * ks + k), (ks, n, k)
# P V: B = V, MN-major, consumer w: N = dims 256 w .., K = tokens 16 kk ..
for w in range(2):
    for kk in range(4):
        start = tile + 4 * w * kC + 2048 * kk
        for n in range(256):
            for k in range(16):
                assert mem[mnmajor(start, n, k, kC, 1024)] == ('K', 16 * kk + k, 256 * w + n)
print("K and V views of the producer's tile: ok")
# Q: write_q row r, piece p (dims 8p..8p+7) at (p/8) kC + sw128_offset(r, p % 8)
qm = {}
for r in range(64):
    for p in range(72):
        for e in range(8):
            qm[(p // 8) * kC + sw128_offset(r, p % 8) + 2 * e] = ('Q', r, 8 * p + e)
for ks in range(36):
    start = (ks // 4) * kC + 32 * (ks % 4)
    for m in range(64):
        for k in range(16):
            assert qm[kmajor(start, m, k, 1024)] == ('Q', m, 16 * ks + k)
print("Q view: ok")
# P: S accumulators d[4j + 2h + c] = S[16 wq + g + 8h][8j + 2t + c]; pf[kk][i] = pack(e[8kk+2i],
# e[8kk+2i+1]); stmatrix kk: register i = pf[kk][i] is matrix i; lane L (i = L/8, r = L%8) gives
# the address of row r of matrix i: P row 16 wq + 8 (i & 1) + r, granule 2 kk + (i >> 1).
pm = {}
pchunk = tile + 8 * kC
for wq in range(4):
    # where each lane's matrix rows go
    addr = {}
    for L in range(32):
        i, r = L >> 3, L & 7
        prow = 16 * wq + 8 * (i & 1) + r
        for kk in range(4):
            addr[(kk, i, r)] = pchunk + sw128_offset(prow, 2 * kk + (i >> 1))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        for kk in range(4):
            for i in range(4):
                for cc in range(2):
                    idx = 8 * kk + 2 * i + cc        # accumulator index
                    j, h, c = idx // 4, (idx >> 1) & 1, idx & 1
                    srow, scol = 16 * wq + g + 8 * h, 8 * j + 2 * t + c
                    # stmatrix: register i of lane (g, t) = row g, cols 2t + cc of matrix i
                    pm[addr[(kk, i, g)] + 2 * (2 * t + cc)] = ('P', srow, scol)
                    # and as the RS A fragment of k-step kk: a[i] of lane (g,t)
                    arow = 16 * wq + g + 8 * (i & 1)
                    acol = 16 * kk + 2 * t + cc + 8 * (i >> 1)
                    assert (arow, acol) == (srow, scol), (kk, i, lane)
for kk in range(4):
    start = pchunk + 32 * kk
    for m in range(64):
        for k in range(16):
            assert pm[kmajor(start, m, k, 1024)] == ('P', m, 16 * kk + k)
print("P: stmatrix placement = K-major A view = RS A fragments: ok")
# bank check of the producer's stores: per warp instruction (k, half), 32 lanes x 16 B
for pw in range(4):
    for k in range(16):
        for half in range(2):
            banks = {}
            for l in range(32):
                c, q = l >> 2, l & 3
                a = 16 * pw * 128 + c * kC + sw128_offset((k + c) & 15, 2 * q + half)
                banks.setdefault((a % 128) // 16, 0); banks[(a % 128) // 16] += 1
            assert max(banks.values()) == 4, banks  # 4 wavefronts for 512 bytes: ideal
print("producer stores: 4 wavefronts per 512 B (conflict-free)")
