# Model of the solo stage-ring protocol of kernels/splitkv/stage1/wgmma.h (twenty-fifth
# session): one in-order producer fills tiles 0, 1, ... into kStages = S stages (a stage is
# refilled once its "empty" barrier completed the previous use); C consumers, consumer w takes
# tiles w, w + C, ...; the producer's "full" arrivals land in issue order, or in any order
# (PTX does not order one thread's asynchronous arrivals on different barriers); waits are by
# parity (try_wait.parity(P) passes while the barrier's completed-phase count has the other
# parity). Checks: no deadlock, and every passing wait sees its phase completed.
#   python3 docs/notes/experiments/solo_ring_protocol_model.py
# Three ways a consumer waits for tile t (use k = t // S of stage t % S):
#   plain: one parity wait on full[t % S] for phase k (landed: only where C divides S);
#   chain: first on each phase since its previous use (k - C + 1 .. k): deadlocks, a parity
#          wait on a phase already passed by two blocks forever;
#   sets:  a full barrier per consumer and stage where C does not divide S: tile t completes on
#          full[t % S][t % C], its consumer waits for phase t // (S * C) there
#          (experiments/exp_solo_full_sets.patch).
import random


def run(n_tiles, S, C, ooo, mode, seed):
    rnd = random.Random(seed)
    sets = C if (mode == 'sets' and S % C != 0) else 1
    full_c = [[0] * sets for _ in range(S)]  # completed phases of each full barrier
    empty_c = [0] * S
    pend, pt, hazard = [], 0, []
    cons = {w: list(range(w, n_tiles, C)) for w in range(C)}
    todo = {w: None for w in range(C)}  # phases still to wait on for the consumer's head tile
    holding = {w: False for w in range(C)}

    def bar(t):
        return t % S, (t % C) if sets > 1 else 0

    def phases(t):
        if sets > 1:
            return [t // (S * sets)]
        k = t // S
        lo = max(0, k - (C - 1)) if (mode == 'chain' and S % C != 0) else k
        return list(range(lo, k + 1))

    while True:
        acts = []
        if pt < n_tiles:
            s, use = pt % S, pt // S
            if use == 0 or (empty_c[s] & 1) != ((use - 1) & 1):
                acts.append(('P',))
        if pend:
            acts += [('A', i) for i in range(len(pend))] if ooo else [('A', 0)]
        for w in range(C):
            if not cons[w]:
                continue
            if holding[w]:
                acts.append(('R', w))
                continue
            t = cons[w][0]
            if todo[w] is None:
                todo[w] = phases(t)
            s, f = bar(t)
            if (full_c[s][f] & 1) != (todo[w][0] & 1):
                acts.append(('W', w))
        if not acts:
            done = pt == n_tiles and not pend and all(not cons[w] for w in range(C))
            return ('ok' if done else 'DEADLOCK'), hazard
        a = rnd.choice(acts)
        if a[0] == 'P':
            pend.append(pt)
            pt += 1
        elif a[0] == 'A':
            s, f = bar(pend.pop(a[1]))
            full_c[s][f] += 1
        elif a[0] == 'W':
            w = a[1]
            t = cons[w][0]
            s, f = bar(t)
            u = todo[w].pop(0)
            if full_c[s][f] < u + 1:
                hazard.append((w, t, u, full_c[s][f]))
            if not todo[w]:
                todo[w] = None
                holding[w] = True
        else:
            w = a[1]
            empty_c[cons[w].pop(0) % S] += 1
            holding[w] = False


if __name__ == '__main__':
    for mode in ('plain', 'chain', 'sets'):
        for C in (2, 3):
            for ooo in (False, True):
                bad = {}
                for S in (2, 3, 4, 5, 6):
                    for n in range(0, 24):
                        for seed in range(100):
                            r, hz = run(n, S, C, ooo, mode, seed)
                            if r != 'ok' or hz:
                                bad.setdefault(S, (r, n, seed, hz[:1]))
                print(f'{mode:5} C={C} arrivals {"any order" if ooo else "in order "}:',
                      bad or 'all ok')
