#!/usr/bin/env python3
"""Where ptxas put the producer's refill loads of wgmma_rows64.h (no nvdisasm needed).

Reads an sm_90a cubin, takes each stage1_wgmma_rows64_kernel, finds the producer's tile body
(the 36 STS.128 of store_and_load before its last LDGSTS) and prints the order of its memory
instructions: S = STS, G = LDG, A = LDGSTS, d = LDS, s / l = STL / LDL (spills), b = BRA.
"during stores" counts the LDGs placed before the last latent store pair, i.e. in flight while
the tile is still being stored (the point of exp_rows64_pipe).

Opcodes are the low 12 bits of each 128-bit instruction, calibrated with CUDA 13.0 on small
kernels: LDG 0x981, STS 0x988, LDS 0x984, LDL 0x983, STL 0x387, LDGSTS 0xfae, BRA 0x947.

Build the cubin: the compile command of stage1_wgmma_fp8.hip.o (ninja -t commands) with
'--generate-code=...' replaced by '-arch=sm_90a', '-c' by '-cubin' and '-o file.cubin'.
Run: python3 rows64_sass_order.py file.cubin
kCross instances (exp_rows64_crossover / _cross_v2) print their producer's letters instead, with
T = st.shared::cluster to the peer: each piece's "SSTT" should be followed by its G.
"""
import struct
import sys

OPS = {0x981: 'G', 0x988: 'S', 0x984: 'd', 0x983: 'l', 0x387: 's', 0xfae: 'A', 0x947: 'b'}


def text_sections(path):
    b = open(path, 'rb').read()
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    sh = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
    names = sh[shstrndx][4]

    def name(off):
        return b[names + off:b.index(b'\0', names + off)].decode()
    return {name(h[0]): b[h[4]:h[4] + h[5]] for h in sh if name(h[0]).startswith('.text.')}


def producer_body(code):
    ops = [struct.unpack_from('<Q', code, i)[0] & 0xfff for i in range(0, len(code), 16)]
    last_a = max(i for i, o in enumerate(ops) if o == 0xfae)
    sts = [i for i, o in enumerate(ops[:last_a]) if o == 0x988]
    first = sts[-36]                      # the tile body's 36 STS.128
    body = ''.join(OPS[o] for o in ops[first:last_a + 1] if o in OPS)
    latent_end = sts[-5]                  # the last latent store pair ends here
    during = sum(1 for o in ops[first:latent_end] if o == 0x981)
    total = sum(1 for o in ops[first:] if o == 0x981)
    return body, during, total


def cross_body(code):
    """The crossover producer (kCross instances, no LDGSTS): its memory ops and branches from the
    first refill load on, T = remote st.shared::cluster (0x385), S = local STS (0x388 there)."""
    ops = [struct.unpack_from('<Q', code, i)[0] & 0xfff for i in range(0, len(code), 16)]
    letters = dict(OPS)
    letters.update({0x385: 'T', 0x388: 'S'})
    first_t = min(i for i, o in enumerate(ops) if o == 0x385)
    start = max(i for i, o in enumerate(ops[:first_t]) if o == 0x981) - 40
    return ''.join(letters[o] for o in ops[start:] if o in letters)


if __name__ == '__main__':
    for n, code in sorted(text_sections(sys.argv[1]).items()):
        if 'rows64_kernel' not in n:
            continue
        fmt = {'1': 'e4m3fn', '2': 'e4m3fnuz'}.get(n.split('KvFormatE')[1][0], n)
        if 'Lb1E' in n:  # exp_rows64_crossover: each piece's SSTT should be followed by its G
            print('%-9s crossover: ' % fmt + cross_body(code))
            continue
        body, during, total = producer_body(code)
        print('%-9s LDGs during the stores: %2d of %2d; spills in the body: %d STL, %d LDL'
              % (fmt, during, total, body.count('s'), body.count('l')))
        print('          ' + body)
