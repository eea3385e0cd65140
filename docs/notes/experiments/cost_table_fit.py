# The planner's stage-1 cost table against measured plans (host only, Python 3, no packages).
# Reads the thirteenth session's A/B and validation CSVs and the twelfth session's split sweep
# (fp8 e4m3fn cache, bf16 Q, contiguous, equal lengths), predicts each measured (shape, plan)
# with src/planner.cpp's formula (waves x (max(tiles a CTA, parallelism) x tile + fixed) + for
# splits 2 launches and the partial O), and for each shape measured with 2+ plans checks which
# plan a table would choose: "pairs right" and the regret (sum of log(chosen / best measured)).
#   python3 docs/notes/experiments/cost_table_fit.py
# Thirteenth session: before 536ca47 16 of 25 right (regret 1.34), 536ca47 21 of 25 (0.33); a
# least-squares fit of the times (fixed costs growing with rows: 4.7 / 6.7 / 7.3 us at 16 / 32 /
# 64 rows) predicts the times better but chooses worse (16 of 25).
import csv, math
import os
ROOT=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
D13=os.path.join(ROOT, 'docs/perf/h200_2026-12-02_s13/')
D12=os.path.join(ROOT, 'docs/perf/h200_2026-12-02_s12/')
def route(s):
    v,rs=s.strip().split(' ')
    rows,splits=rs.split('/')
    return v,int(rows),int(splits)
def load():
    pts=[]
    def add(r,v,rows,splits,us,src):
        pts.append(dict(bs=int(r['bs']),q=int(r['q_len']),kv=int(r['kv_len']),h=int(r['heads']),v=v,rows=rows,splits=splits,us=float(us),src=src))
    for f,cols in (('ab_cost_table_s13.csv','ab'),('ab_o_no_drain_and_cost_table_s13b.csv','ac')):
        for r in csv.DictReader(open(D13+f)):
            if r['kv_format']!='fp8_e4m3fn' or r['q_format']!='bf16' or r['page_size']!='1': continue
            for c in cols:
                add(r,*route(r[c+'_route']),r[c+'_us'],f)
    for r in csv.DictReader(open(D13+'mla_bench_checked.csv')):
        if r['kv_format']!='fp8_e4m3fn' or r['q_format']!='bf16' or r['page_size']!='1' or r['lengths']!='equal' or r['q_lens']!='equal': continue
        add(r,r['variant'],int(r['rows_per_cta']),int(r['splits']),r['median_us'],'validate13')
    for r in csv.DictReader(open(D12+'sweep_main.csv')):
        if r['kv_format']!='fp8_e4m3fn' or r['page_size']!='1' or r['lengths']!='equal': continue
        add(r,r['variant'],int(r['rows_per_cta']),int(r['splits']),r['median_us'],'sweep12')
    agg={}
    for p in pts:
        k=(p['bs'],p['q'],p['kv'],p['h'],p['v'],p['rows'],p['splits'])
        agg.setdefault(k,[]).append(p['us'])
    P=[dict(bs=k[0],q=k[1],kv=k[2],h=k[3],v=k[4],rows=k[5],splits=k[6],us=sorted(u)[len(u)//2]) for k,u in agg.items()]
    shapes={}
    for p in P: shapes.setdefault((p['bs'],p['q'],p['kv'],p['h']),[]).append(p)
    pairs=[v for v in shapes.values() if len(v)>1]
    return P,pairs
UNITS=132; BW=3.6e6; ROWB=576
def pred(p,th):
    tiles=max(1,-(-p['kv']//64))
    tpc=-(-tiles//p['splits'])
    groups=-(-(p['q']*p['h'])//p['rows'])
    ctas=p['bs']*p['splits']*groups
    waves=-(-ctas//UNITS)
    cls='m' if p['v'].startswith('mma') else 'w%d'%p['rows']
    t=max(64*ROWB/(BW/UNITS), th['t'+cls]); par=1 if cls=='m' else 2
    st=waves*(max(tpc,par)*t+th['f'+cls])
    if p['splits']>1:
        st+=2*th['L']+2*(p['bs']*p['q'])*p['splits']*p['h']*2048/BW
    return st
def loss(th): return sum((math.log(pred(p,th)/p['us']))**2 for p in P)
def score(th):
    ok=0;regret=0;bad=[]
    for v in pairs:
        best=min(v,key=lambda p:p['us']); pb=min(v,key=lambda p:pred(p,th))
        ok+= best is pb; regret+=math.log(pb['us']/best['us'])
        if best is not pb: bad.append('%d q%d kv%d h%d: %s'%(v[0]['bs'],v[0]['q'],v[0]['kv'],v[0]['h'], ' | '.join('%s%d/%d %.1f%s'%(p['v'][0],p['rows'],p['splits'],p['us'],'*' if p is pb else '') for p in sorted(v,key=lambda p:p['us']))))
    return ok,regret,bad
def report(th,name,show=True):
    ok,regret,bad=score(th)
    print(name, {k:round(v,3) for k,v in th.items()}, 'loss %.3f, pairs right %d of %d, regret %.3f (sum log)'%(loss(th),ok,len(pairs),regret))
    if show:
        for b in bad: print('   miss',b)
def fit(th,keys,lo=0.0):
    step={k:0.5 for k in keys}
    for it in range(2000):
        improved=False
        for k in keys:
            for d in (step[k],-step[k]):
                t2=dict(th); t2[k]=max(lo,t2[k]+d)
                if loss(t2)<loss(th)-1e-12: th=t2; improved=True
        if not improved:
            for k in keys: step[k]/=2
            if max(step.values())<1e-4: break
    return th
P,pairs=load()
cur=dict(tm=2.4,fm=2.0,tw16=1.37,fw16=3.0,tw32=2.0,fw32=3.0,tw64=3.0,fw64=3.0,L=2.5)
land=dict(cur,fw16=2.0,fw32=2.0,fw64=2.0)
report(cur,'before 536ca47')
report(land,'536ca47 (landed)')
base=dict(land,tw16=1.33,tw32=1.75,tw64=2.55)
f1=fit(dict(base),['fm','fw16','fw32','fw64','L'])
report(f1,'fit fixed+L, long-CTA tiles')
f2=fit(dict(base),['tm','fm','fw16','fw32','fw64','L','tw16','tw32','tw64'])
report(f2,'fit all',show=False)
