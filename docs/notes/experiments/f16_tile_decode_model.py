# Host model of exp_mxfp4_f16_tile.patch's decode: e2m1 x 2^j to f16 by byte lookups (PRMT
# emulated) against exact values, every j of -40..13 (twenty-first session, a helper).
import random, struct, math
def prmt(a,b,sel):
    by=[(a>>(8*i))&255 for i in range(4)]+[(b>>(8*i))&255 for i in range(4)]
    r=0
    for i in range(4):
        s=(sel>>(4*i))&15
        v=by[s&7]
        if s&8: v=255 if v&128 else 0
        r|=v<<(8*i)
    return r
def f16bits(x): return struct.unpack('<H',struct.pack('<e',x))[0]
def f32(x): return struct.unpack('<f',struct.pack('<f',x))[0]
def table(j):
    jj=max(j,-40)
    x=2.0**(jj+16)
    q=lambda v: f32(round(f32(v*x))/65536)
    vals=[0,q(.5),q(1),q(1.5),q(2),q(3),q(4),q(6)]
    hb=[f16bits(float(v))>>8 for v in vals]
    for v in vals: assert f16bits(float(v))&255==0
    lo=hb[0]|hb[1]<<8|hb[2]<<16|hb[3]<<24; hi=hb[4]|hb[5]<<8|hb[6]<<16|hb[7]<<24
    return lo,hi
def codes(j):
    if j< -13: return table(j)
    u=j&0xffffffff
    return ((u*0x04040400+0x3E3C3800)&0xffffffff, (u*0x04040404+0x46444240)&0xffffffff)
def core(w,lo,hi):
    m=w&0x77777777
    rx=prmt(lo,hi,m); ry=prmt(lo,hi,(m>>16))
    f=[]
    for c in range(4):
        sel=0x8|(c<<4)|(0x8<<8)|((4+c)<<12)
        f.append(prmt(rx,ry,sel)|(((w<<(12-4*c))&0xffffffff)&0x80008000))
    return f
E=[0,.5,1,1.5,2,3,4,6]
bad=0
for j in range(-40,14):
    lo,hi=codes(j)
    if j>=-13:
        assert (lo,hi)==table(j),(j,hex(lo),hex(hi),[hex(x) for x in table(j)])
    for trial in range(200):
        w=random.getrandbits(32)
        f=core(w,lo,hi)
        for c in range(4):
            for half,el in ((0,c),(1,4+c)):
                nib=(w>>(4*el))&15
                v=E[nib&7]*2.0**j*(-1 if nib&8 else 1)
                h=(f[c]>>(16*half))&0xffff
                got=struct.unpack('<e',struct.pack('<H',h))[0]
                if j>=-15:
                    ok = got==v
                else:
                    ok = abs(got-v)<=2**-17 + 1e-30
                if not ok: bad+=1; print(j,hex(w),c,half,v,got)
print("bad",bad)
