# The planner's fp8 wgmma cost table (src/plan.cpp, stage1_cost) against the fifty-third
# session's rows x splits sweeps (host only, Python 3, no packages):
#   python3 docs/notes/experiments/cost_table_fit_s53.py            (current table, candidates)
#   python3 docs/notes/experiments/cost_table_fit_s53.py --search   (the grid search)
# Data: docs/perf/h100_2026-12-06_s53/offgrid_sweep/ and rows_sweep/offgrid_sweep.tgz (mla_bench
# CSVs, one per forced side; fp8 e4m3fn cache, bf16 Q; moved_ab/ is the out-of-sample check and
# is not read). For each shape timed with
# 2+ plans (rows per CTA, splits), the plan the model chooses among the timed ones is "right"
# within 2 % of the fastest; regret = sum of log(chosen / fastest). The model is the
# twenty-fourth session's predict() (cost_table_fit_s24.py: src/planner.cpp's).
import csv, glob, io, itertools, os, sys, tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cost_table_fit_s24 import ROOT, predict, score  # noqa: E402

FMT = 'fp8_e4m3fn'
DATA = [os.path.join(ROOT, 'docs/perf/h100_2026-12-06_s53', d)
        for d in ('offgrid_sweep', 'rows_sweep')]


def rows_of(text, pts):
    for r in csv.DictReader(io.StringIO(text)):
        if r['kv_format'] != FMT or r['variant'] != 'wgmma' or not r['median_us']:
            continue
        key = (FMT, int(r['bs']), int(r['kv_len']), int(r['heads']), int(r['q_len']))
        plan = (int(r['rows_per_cta']), int(r['splits']))
        pts.setdefault(key, {}).setdefault(plan, []).append(float(r['median_us']))


def load():
    pts = {}
    for path in sorted(p for d in DATA for p in glob.glob(os.path.join(d, '*.csv'))):
        rows_of(open(path).read(), pts)
    for path in sorted(p for d in DATA for p in glob.glob(os.path.join(d, '*.tgz'))):
        with tarfile.open(path) as t:
            for m in t.getmembers():
                if m.name.endswith('.csv'):
                    rows_of(t.extractfile(m).read().decode(), pts)
    for plans in pts.values():
        for rs in plans:
            plans[rs] = sorted(plans[rs])
    return pts


# (tile us, fixed us, tiles at once, split_cta_us) per rows per CTA; 0.7.32's table.
CURRENT = {FMT: {16: (1.37, 2.0, 2, 1.0), 32: (1.75, 2.0, 2, 3.0), 64: (2.55, 2.0, 2, 12.0)},
           'charge': 0.03}


def table(t16, t32, s32, t64, s64):
    return {FMT: {16: (t16, 2.0, 2, 1.0), 32: (t32, 2.0, 2, s32), 64: (t64, 2.0, 2, s64)},
            'charge': 0.03}


if __name__ == '__main__':
    pts = load()
    print('%d shapes, %d timed plans' % (len(pts), sum(len(p) for p in pts.values())))
    if '--search' in sys.argv:
        res = []
        for v in itertools.product([1.2, 1.3, 1.37], [1.3, 1.4, 1.5, 1.6, 1.75],
                                   [0, 1, 2, 3, 4, 6], [2.0, 2.2, 2.4, 2.55], [4, 8, 12]):
            right, n, regret = score(pts, table(*v), FMT)
            res.append((round(regret, 3), -right, v))
        for r in sorted(res)[:12]:
            print('regret %.3f right %d' % (r[0], -r[1]), r[2])
    cands = [('0.7.32', CURRENT), ('0.7.33', table(1.37, 1.55, 4.0, 2.55, 12.0))]
    for name, t in cands:
        right, n, regret = score(pts, t, FMT)
        print('%s: %d of %d shapes right, regret %.3f' % (name, right, n, regret))
        score(pts, t, FMT, verbose=True)
