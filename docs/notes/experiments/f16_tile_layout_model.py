# exp_mxfp4_f16_tile.patch (twenty-first session, a helper).
# Host model of the f16 core-matrix tile: decoder thread mapping, stores, descriptor reads.
import random
T=64; KB=1024
def core_block(piece,c):
    if piece<16: return 16*(piece//4)+8*(c//2)+2*(piece%4)+c%2
    return 64+4*(piece-16)+c
# decoder mapping (kSubStride 8, 4 threads a row, rope apart)
kSub=8; R=4; kLat=16; kPer=5
written={}  # byte offset -> (token, dim)
covered=set(); fac=set()
for dt in range(256):
    sub=dt//kSub%R; row=dt//(kSub*R)*kSub+dt%kSub
    has_rope=dt<2*T; rope_row=row+(sub>>1)*(T//2)
    for j in range(kPer):
        if j==kPer-1: piece=kLat+(sub&1); r=rope_row
        else: piece=sub+R*j; r=row
        if piece>=kLat and not has_rope: continue
        assert (r,piece) not in covered; covered.add((r,piece))
        for c in range(4):
            base=core_block(piece,c)*KB+16*r
            for g in range(8):
                off=base+2*g; assert off not in written
                written[off]=(r,32*piece+4*g+c)
    if sub==0: fac.add(('x',row))
    if has_rope and (sub&1)==0: fac.add(('y',rope_row))
assert len(covered)==T*18 and len(written)==T*576
assert all(('x',r) in fac and ('y',r) in fac for r in range(T))
# store phases: lanes 8i..8i+7 of a warp write 128 contiguous bytes
for w in range(8):
    for ph in range(4):
        lanes=[32*w+8*ph+i for i in range(8)]
        rows=[dt//32*8+dt%8 for dt in lanes]; assert rows==list(range(rows[0],rows[0]+8))
# S^T K-major read: k-step s, token m, k index kk at 2 s blocks + (kk/8)*LBO(1KB)
#   + (m/8)*SBO(128) + (m%8)*16 + (kk%8)*2
qt_dim={}
for d in range(576):
    b=core_block(d//32,d%4); kk=8*(b%2)+(d%32)//4; qt_dim[(b//2,kk)]=d
for s in range(36):
    for m in range(T):
        for kk in range(16):
            off=2*s*KB+(kk//8)*KB+(m//8)*128+(m%8)*16+(kk%8)*2
            tok,dim=written[off]; assert tok==m and dim==qt_dim[(s,kk)]
            assert (s>=32)==(dim>=512)
# V^T MN-major read: consumer w, m-block mb, k-step kk: elem (R,k) at (32w+8mb)KB + 256kk
#   + (R/8)*SBO(1KB) + (k/8)*LBO(128) + (k%8)*16 + (R%8)*2
for w in range(2):
    for mb in range(4):
        pp,e=mb//2,mb%2
        for kk in range(4):
            for Rr in range(64):
                wq,h,g=Rr//16,(Rr//8)%2,Rr%8
                for k in range(16):
                    off=(32*w+8*mb)*KB+256*kk+(Rr//8)*KB+(k//8)*128+(k%8)*16+(Rr%8)*2
                    tok,dim=written[off]
                    assert tok==16*kk+k
                    assert dim==256*w+32*wq+4*g+128*pp+2*e+h, (w,mb,kk,Rr,k,dim)
print("layout ok")
