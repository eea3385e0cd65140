# Model of the solo stage-ring protocol with C consumers (w takes tiles w, w + C, ...), one
# in-order producer, "full" arrivals in or out of issue order, parity waits; with the chain of
# waits of the three-consumer experiment (each phase since the consumer's previous use of the
# stage, where kStages % C != 0). Checks: no deadlock, every passing wait sees its phase done.
import random

def run(n_tiles, S, C, ooo, chain, seed):
    rnd = random.Random(seed)
    full_c = [0] * S
    empty_c = [0] * S
    pend = []
    pt = 0
    cons = {w: list(range(w, n_tiles, C)) for w in range(C)}
    waits = {w: None for w in range(C)}  # pending phases to wait on for the head tile
    state = {w: 'wait' for w in range(C)}
    hazard = []
    while True:
        acts = []
        if pt < n_tiles:
            s, use = pt % S, pt // S
            if use == 0 or (empty_c[s] & 1) != ((use - 1) & 1):
                acts.append(('P',))
        if pend:
            acts += [('A', i) for i in range(len(pend))] if ooo else [('A', 0)]
        for w in range(C):
            if not cons[w]: continue
            t = cons[w][0]; s = t % S; k = t // S
            if state[w] == 'wait':
                if waits[w] is None:
                    lo = max(0, k - (C - 1)) if (chain and S % C != 0) else k
                    waits[w] = list(range(lo, k + 1))
                u = waits[w][0]
                if (full_c[s] & 1) != (u & 1): acts.append(('W', w))
            else:
                acts.append(('R', w))
        if not acts:
            done = pt == n_tiles and not pend and all(not cons[w] for w in range(C))
            return ('ok' if done else 'DEADLOCK', hazard)
        a = rnd.choice(acts)
        if a[0] == 'P': pend.append(pt); pt += 1
        elif a[0] == 'A':
            t = pend.pop(a[1]); full_c[t % S] += 1
        elif a[0] == 'W':
            w = a[1]; t = cons[w][0]; s = t % S
            u = waits[w].pop(0)
            if full_c[s] < u + 1: hazard.append((w, t, u, full_c[s]))
            if not waits[w]:
                waits[w] = None
                state[w] = 'work'
        elif a[0] == 'R':
            w = a[1]; t = cons[w].pop(0); empty_c[t % S] += 1; state[w] = 'wait'

for C in (2, 3):
    for chain in (False, True):
        for ooo in (False, True):
            bad = {}
            for S in (2, 3, 4, 5, 6):
                for n in range(0, 16):
                    for seed in range(200):
                        r, hz = run(n, S, C, ooo, chain, seed)
                        if r != 'ok' or hz:
                            bad.setdefault(S, (r, n, seed, hz[:1]))
            print(f'C={C} chain={chain} out_of_order={ooo}:', bad or 'all ok')

# Per-consumer "full" barriers: tile t arrives on full[t % S][t % C] (when S % C != 0) and its
# consumer waits there with parity (t // (S * C)) & 1.
def run_sets(n_tiles, S, C, ooo, seed):
    rnd = random.Random(seed)
    sets = C if S % C != 0 else 1
    full_c = [[0] * sets for _ in range(S)]
    empty_c = [0] * S
    pend = []
    pt = 0
    cons = {w: list(range(w, n_tiles, C)) for w in range(C)}
    state = {w: 'wait' for w in range(C)}
    hazard = []
    def slot(t): return (t % S, (t % C) if sets > 1 else 0)
    def phase(t): return t // (S * sets)
    while True:
        acts = []
        if pt < n_tiles:
            s, use = pt % S, pt // S
            if use == 0 or (empty_c[s] & 1) != ((use - 1) & 1):
                acts.append(('P',))
        if pend:
            acts += [('A', i) for i in range(len(pend))] if ooo else [('A', 0)]
        for w in range(C):
            if not cons[w]: continue
            t = cons[w][0]; s, f = slot(t); k = phase(t)
            if state[w] == 'wait':
                if (full_c[s][f] & 1) != (k & 1): acts.append(('W', w))
            else:
                acts.append(('R', w))
        if not acts:
            done = pt == n_tiles and not pend and all(not cons[w] for w in range(C))
            return ('ok' if done else 'DEADLOCK', hazard)
        a = rnd.choice(acts)
        if a[0] == 'P': pend.append(pt); pt += 1
        elif a[0] == 'A':
            t = pend.pop(a[1]); s, f = slot(t); full_c[s][f] += 1
        elif a[0] == 'W':
            w = a[1]; t = cons[w][0]; s, f = slot(t)
            if full_c[s][f] != phase(t) + 1: hazard.append((w, t, full_c[s][f], phase(t) + 1))
            state[w] = 'work'
        elif a[0] == 'R':
            w = a[1]; t = cons[w].pop(0); empty_c[t % S] += 1; state[w] = 'wait'

print('per-consumer full barriers:')
for C in (2, 3):
    for ooo in (False, True):
        bad = {}
        for S in (2, 3, 4, 5, 6):
            for n in range(0, 40):
                for seed in range(100):
                    r, hz = run_sets(n, S, C, ooo, seed)
                    if r != 'ok' or hz:
                        bad.setdefault(S, (r, n, seed, hz[:1]))
        print(f'C={C} out_of_order={ooo}:', bad or 'all ok')
