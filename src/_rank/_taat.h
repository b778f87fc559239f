/* Accumulated top-k of `_rank._core`: the essential lists summed term at a time, every other
 * weight looked up (docs/rank-at-scale.md). Portable C99, no allocation.
 *
 * With the threshold fixed at the depth bound, the query's terms split as in MaxScore: the
 * lowest-bound terms whose bounds together stay under it are non-essential, so every hit holds
 * an essential term. Their postings are summed into per-document accumulators (a bound only:
 * the order differs from the query's); then each touched document's bound, its accumulated sum
 * plus the non-essential terms' largest weights (the forwarded ones read exactly from the
 * forward index), is compared with the bar, and a document over it is scored exactly: every
 * query term's weight looked up (forward index, or a search of the term's list) and summed in
 * query order, as the reference does.
 */
#ifndef RANK_TAAT_H
#define RANK_TAAT_H

#include "_maxscore.h"
#include "_forward.h"

/* the position of document d in term t's postings, -1 when t is not in d (block ends, then a
 * binary search inside the block) */
static int64_t rk_find(const RkIndex *ix, int32_t t, int32_t d)
{
    int64_t lo = ix->blk_off[t], hi = ix->blk_off[t + 1], mid, first, last;
    while (lo < hi) {  /* the first block whose last document is >= d */
        mid = lo + (hi - lo) / 2;
        if (ix->blk_last[mid] < d)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == ix->blk_off[t + 1])
        return -1;
    first = ix->offsets[t] + (lo - ix->blk_off[t]) * RK_BLOCK;
    last = first + RK_BLOCK;
    if (last > ix->offsets[t + 1])
        last = ix->offsets[t + 1];
    while (first < last) {
        mid = first + (last - first) / 2;
        if (ix->docs[mid] < d)
            first = mid + 1;
        else
            last = mid;
    }
    return ix->docs[first] == d ? first : -1;
}

/* weights of d in the forwarded query terms into w[slot] (0 where absent); keys/kslot: the
 * query's forward keys ascending (UINT32_MAX last) and each one's query slot */
static inline void rk_forward_weights(const RkIndex *ix, const int32_t *qterms,
                                      const uint32_t *keys, const ptrdiff_t *kslot, int32_t d,
                                      double *w, int *has)
{
    const uint32_t *e = ix->fwd_ent + ix->fwd_off[d], *e_end = ix->fwd_ent + ix->fwd_off[d + 1];
    const uint32_t *key = keys;
    for (; e < e_end; e++) {
        uint32_t slot = *e & 0xFFFF0000u;
        while (*key < slot)
            key++;
        if (*key == UINT32_MAX)
            return;
        if (*key == slot) {
            double tf = (double)(*e & 0xFFFFu);
            ptrdiff_t i = kslot[key - keys];
            w[i] = ix->idf[qterms[i]] * (tf * ix->k1p1) / (tf + ix->knorm[d]);
            has[i] = 1;
        }
    }
}

/* d's exact hit: every query term's weight (forward index, else a search of its list) summed
 * in query order, as the reference sums; w and has are scratch of nq entries */
static void rk_exact(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq,
                     const uint32_t *keys, const ptrdiff_t *kslot, int32_t d, double *w,
                     int *has, RkHit *hit)
{
    ptrdiff_t i;
    int64_t p;
    double s = 0.0;
    int32_t m = 0;
    for (i = 0; i < nq; i++) {
        w[i] = 0.0;
        has[i] = 0;
    }
    rk_forward_weights(ix, qterms, keys, kslot, d, w, has);
    for (i = 0; i < nq; i++) {
        if (ix->fwd_slot[qterms[i]] < 0) {
            p = rk_find(ix, qterms[i], d);
            if (p >= 0) {
                w[i] = rk_weight(ix, qterms[i], p);
                has[i] = 1;
            }
        }
        if (has[i]) {
            s += w[i];
            m++;
        }
    }
    hit->score = s;
    hit->doc = d;
    hit->matched = m;
}

#define RK_ACC_MAX_TERMS 32

/* the sum of d's weights in the forwarded terms of keys (ascending, UINT32_MAX last) whose
 * IDFs are kidf: a bound's part, summed in slot order */
static inline double rk_forward_sum(const RkIndex *ix, const uint32_t *keys, const double *kidf,
                                    int32_t d)
{
    const uint32_t *e = ix->fwd_ent + ix->fwd_off[d], *e_end = ix->fwd_ent + ix->fwd_off[d + 1];
    const uint32_t *key = keys;
    double sum = 0.0, knorm = ix->knorm[d];
    for (; e < e_end; e++) {
        uint32_t slot = *e & 0xFFFF0000u;
        if (slot < *key)
            continue;
        while (*key < slot)
            key++;
        if (*key == slot) {
            double tf = (double)(*e & 0xFFFFu);
            sum += kidf[key - keys] * (tf * ix->k1p1) / (tf + knorm);
        } else if (*key == UINT32_MAX) {
            break;
        }
    }
    return sum;
}

/* The forward keys of the lists not summed into nkeys (UINT32_MAX last) and their IDFs into
 * nkidf (returns their count); into *rest_nf, the largest weights of the other lists not
 * summed. */
static ptrdiff_t rk_acc_rest(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq,
                             const uint32_t *keys, const ptrdiff_t *kslot, ptrdiff_t nf,
                             const int *summed, const double *ub, uint32_t *nkeys,
                             double *nkidf, double *rest_nf)
{
    ptrdiff_t i, j, nnf = 0;
    for (j = 0; j < nf; j++) {
        if (summed[kslot[j]])
            continue;
        nkeys[nnf] = keys[j];
        nkidf[nnf++] = ix->idf[qterms[kslot[j]]];
    }
    nkeys[nnf] = UINT32_MAX;
    *rest_nf = 0.0;
    for (i = 0; i < nq; i++)
        if (!summed[i] && ix->fwd_slot[qterms[i]] < 0)
            *rest_nf += ub[i];
    return nnf;
}

/* Document d with `bound`, the sum of its summed lists' weights: the forwarded lists not summed
 * added exactly, the others at their largest weights; over the bar, d is scored exactly and
 * offered to the hits (the bar rising with them). Returns the number of hits. */
static ptrdiff_t rk_acc_try(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq,
                            const uint32_t *keys, const ptrdiff_t *kslot, const uint32_t *nkeys,
                            const double *nkidf, ptrdiff_t nnf, double rest_nf, int32_t d,
                            double bound, RkBar *bar, double *w, int *has, RkHit *hits,
                            ptrdiff_t nh, ptrdiff_t k)
{
    RkHit hit;
    if (nnf && rk_below(bar, bound + rest_nf + rk_forward_sum(ix, nkeys, nkidf, d)))
        return nh;
    rk_exact(ix, qterms, nq, keys, kslot, d, w, has, &hit);
    nh = rk_offer(hits, nh, k, &hit);
    if (nh == k && hits[0].score > bar->theta)
        bar->theta = hits[0].score;  /* strict: documents come in no index order */
    return nh;
}

/* Top k (1 <= k) for min_matched <= 1 with a forward index, when one list holds every hit:
 * into hits (k entries; seeds: k more of scratch; matched: n_docs entries, zeroed and left
 * zeroed). The k largest weights of the list of largest bound are scored exactly first; if the
 * other lists together then cannot lift a document over the k-th of those scores, that list is
 * walked alone and every other weight looked up. Returns the number of hits, or -2 when
 * another list could hold a hit, that list is longer than max_first postings (with other
 * terms) or the query is too long, with *floor set to a strict lower
 * bound of the k-th best score (0 when none) for rk_top_k. */
static ptrdiff_t rk_top_k_acc(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq,
                              ptrdiff_t k, int64_t max_first, int32_t *matched, RkHit *hits,
                              RkHit *seeds, double *floor)
{
    double ub[RK_ACC_MAX_TERMS], prefix[RK_ACC_MAX_TERMS], w[RK_ACC_MAX_TERMS];
    double nkidf[RK_ACC_MAX_TERMS], rest_nf = 0.0, bound;
    uint32_t keys[RK_ACC_MAX_TERMS + 1], nkeys[RK_ACC_MAX_TERMS + 1], key;
    ptrdiff_t kslot[RK_ACC_MAX_TERMS], order[RK_ACC_MAX_TERMS];
    ptrdiff_t nf = 0, nnf, nh = 0, ns = 0, i, j;
    int summed[RK_ACC_MAX_TERMS], has[RK_ACC_MAX_TERMS];
    int32_t t;
    int64_t p, first, last;
    RkBar bar;
    RkHit hit;
    *floor = 0.0;
    if (nq > RK_ACC_MAX_TERMS || ix->fwd_slot == NULL)
        return -2;
    bar.theta = rk_depth_bound(ix, qterms, nq, k, 1);
    bar.tie = 0;
    for (i = 0; i < nq; i++) {  /* query slots by largest weight ascending */
        ub[i] = ix->term_max[qterms[i]];
        summed[i] = 0;
        for (j = i; j > 0 && ub[order[j - 1]] > ub[i]; j--)
            order[j] = order[j - 1];
        order[j] = i;
    }
    for (j = 0; j < nq; j++)
        prefix[j] = (j ? prefix[j - 1] : 0.0) + ub[order[j]];
    t = qterms[order[nq - 1]];
    first = ix->offsets[t];
    last = ix->offsets[t + 1];
    if (nq > 1 && last - first > max_first)
        return -2;
    for (i = 0; i < nq; i++) {  /* the query's forward keys, ascending */
        if (ix->fwd_slot[qterms[i]] < 0)
            continue;
        key = (uint32_t)ix->fwd_slot[qterms[i]] << 16;
        for (j = nf; j > 0 && keys[j - 1] > key; j--) {
            keys[j] = keys[j - 1];
            kslot[j] = kslot[j - 1];
        }
        keys[j] = key;
        kslot[j] = i;
        nf++;
    }
    keys[nf] = UINT32_MAX;
    /* the bar: the exact scores of the k largest weights of the list of largest bound */
    for (p = first; p < last; p++) {
        hit.score = rk_weight(ix, t, p);
        if (ns == k && hit.score <= seeds[0].score)
            continue;
        hit.doc = ix->docs[p];
        ns = rk_offer(seeds, ns, k, &hit);
    }
    for (j = 0; j < ns; j++) {
        rk_exact(ix, qterms, nq, keys, kslot, seeds[j].doc, w, has, &hit);
        nh = rk_offer(hits, nh, k, &hit);
    }
    if (nh == k && hits[0].score > bar.theta)
        bar.theta = hits[0].score;  /* strict: documents come in no index order */
    if (nq > 1 && !rk_below(&bar, prefix[nq - 2])) {
        *floor = nh == k ? hits[0].score : 0.0;
        return -2;
    }
    for (j = 0; j < ns; j++)
        matched[seeds[j].doc] = 1;  /* scored */
    /* that list alone holds every hit: walk it */
    summed[order[nq - 1]] = 1;
    nnf = rk_acc_rest(ix, qterms, nq, keys, kslot, nf, summed, ub, nkeys, nkidf, &rest_nf);
    for (p = first; p < last; p++) {
        bound = rk_weight(ix, t, p);
        if (rk_below(&bar, bound + (nq > 1 ? prefix[nq - 2] : 0.0)) || matched[ix->docs[p]])
            continue;
        nh = rk_acc_try(ix, qterms, nq, keys, kslot, nkeys, nkidf, nnf, rest_nf, ix->docs[p],
                        bound, &bar, w, has, hits, nh, k);
    }
    for (j = 0; j < ns; j++)
        matched[seeds[j].doc] = 0;
    rk_sort_hits(hits, nh, nh == k);
    return nh;
}

#endif /* RANK_TAAT_H */
