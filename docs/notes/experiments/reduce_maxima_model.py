# Host model of wgmma.h reduce_tile_maxima (the halving lane exchange), from the thirteenth
# session's cold review of 16d3b89: every row's value in red[] is the max over the 8 lanes g that
# share t4, each row written once, for kCols 4 / 8 / 16 (16 / 32 / 64 rows). The mappings
# col_of_slot / slot_of / col_of are WgmmaConfig's, copied. Run: python3 reduce_maxima_model.py
import random
def col_of_slot(jj,t): return 8*(jj//2)+2*t+(jj&1)
def slot_of(i): return (i//4)*2+(i&1)
def col_of(i,t): return 8*(i//4)+2*t+(i&1)
def run(K, trials=200):
    N=4*K
    # consistency of slot_of / col_of_slot with col_of
    for t in range(4):
        for k in range(N//2):
            assert col_of_slot(slot_of(k),t)==col_of(k,t)
    assert sorted(col_of_slot(j,t) for t in range(4) for j in range(K))==list(range(N))
    writes_total=0
    for _ in range(trials):
        V=[[random.random() for _ in range(K)] for _ in range(32)]
        v=[list(x) for x in V]; base=[0]*32
        def halve(h,mask):
            nonlocal v
            send=[[None]*h for _ in range(32)]; keep=[[None]*h for _ in range(32)]
            for L in range(32):
                up=(L&mask)!=0
                for i in range(h):
                    send[L][i]=v[L][i] if up else v[L][i+h]
                    keep[L][i]=v[L][i+h] if up else v[L][i]
            for L in range(32):
                up=(L&mask)!=0
                for i in range(h):
                    v[L][i]=max(keep[L][i],send[L^mask][i])
                if up: base[L]+=h
        h0,h1,h2=K//2,K//4,K//8
        halve(h0,16); halve(h1,8)
        active=list(range(32))
        if h2>0: halve(h2,4)
        else:
            tmp=[v[L][0] for L in range(32)]
            for L in range(32): v[L][0]=max(tmp[L],tmp[L^4])
            active=[L for L in range(32) if not (L&4)]
        kLeft=h2 if h2>0 else 1
        red={}
        for L in active:
            t4=L&3
            for i in range(kLeft):
                c=col_of_slot(base[L]+i,t4)
                red.setdefault(c,[]).append(v[L][i])
        # expected
        for c in range(N):
            exp=None
            for L in range(32):
                for j in range(K):
                    if col_of_slot(j,L&3)==c:
                        exp=V[L][j] if exp is None else max(exp,V[L][j])
            assert c in red, (K,c,"missing")
            assert all(x==exp for x in red[c]), (K,c,red[c],exp)
        assert set(red)==set(range(N))
        writes_total=sum(len(x) for x in red.values())
    return N, writes_total
for K in (4,8,16):
    N,w=run(K); print(f"kCols={K} N={N}: all {N} rows correct over 200 random trials; writes per warp={w} ({w/N:.0f} per row)")
