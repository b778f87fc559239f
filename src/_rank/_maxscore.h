/* Pruned top-k of `_rank._core`: document-at-a-time MaxScore over the postings of the query
 * terms, with block-max interval skipping and a depth bound that sets the threshold before the
 * first document (docs/rank-at-scale.md). Portable C99, malloc/free only.
 *
 * Pruning only decides which documents are scored: a scored document's weights are summed in
 * query order exactly as rk_score_all sums them, so both paths return the same hits.
 */
#ifndef RANK_MAXSCORE_H
#define RANK_MAXSCORE_H

#include "_topk.h"

#define RK_NONE INT32_MAX

typedef struct {
    int64_t pos, end, base;       /* current posting, end of the list, its first posting */
    int64_t blk, blk_first, blk_end;
    int32_t doc;                  /* docs[pos], RK_NONE once exhausted */
    int32_t term;
    ptrdiff_t slot;               /* position of the term in the query */
    double ub;                    /* the term's largest weight */
} RkCursor;

static inline void rk_next(const RkIndex *ix, RkCursor *c)
{
    c->pos++;
    c->doc = c->pos < c->end ? ix->docs[c->pos] : RK_NONE;
}

/* move the block of c to the first one whose last document is >= target (galloping, then
 * binary search: a probe far ahead costs the log of the distance); 0 when none is */
static inline int rk_seek_block(const RkIndex *ix, RkCursor *c, int32_t target)
{
    int64_t lo = c->blk, hi, mid, step = 1;
    if (lo >= c->blk_end)
        return 0;
    if (ix->blk_last[lo] >= target)
        return 1;
    hi = lo + 1;
    while (hi < c->blk_end && ix->blk_last[hi] < target) {
        lo = hi;
        step <<= 1;
        hi = lo + step;
    }
    if (hi > c->blk_end)
        hi = c->blk_end;
    while (hi - lo > 1) {  /* blk_last[lo] < target; hi is blk_end or blk_last[hi] >= target */
        mid = lo + (hi - lo) / 2;
        if (ix->blk_last[mid] < target)
            lo = mid;
        else
            hi = mid;
    }
    c->blk = hi;
    return hi < c->blk_end;
}

/* move c to its first posting with a document >= target: galloping over block ends, then an
 * interpolation inside the block */
static inline void rk_advance(const RkIndex *ix, RkCursor *c, int32_t target)
{
    int64_t lo, hi;
    if (c->doc >= target)
        return;
    if (!rk_seek_block(ix, c, target)) {
        c->pos = c->end;
        c->doc = RK_NONE;
        return;
    }
    lo = c->base + (c->blk - c->blk_first) * RK_BLOCK;  /* the block holds the answer */
    if (lo < c->pos)
        lo = c->pos;
    hi = c->base + (c->blk - c->blk_first + 1) * RK_BLOCK;
    if (hi > c->end)
        hi = c->end;
    hi--;  /* docs[hi] >= target: the block's last document */
    if (ix->docs[lo] < target) {
        /* interpolate from docs[lo] < target at the block's density (its documents are spread
         * about evenly), then step to the first document >= target (docs[hi] >= target) */
        int64_t guess = lo + (((int64_t)(target - ix->docs[lo]) * ix->blk_scale[c->blk]) >> 16);
        lo = guess < hi ? guess : hi;
        if (ix->docs[lo] >= target)
            while (ix->docs[lo - 1] >= target)
                lo--;
        else
            while (ix->docs[++lo] < target) {
            }
    }
    c->pos = lo;
    c->doc = ix->docs[lo];
}

/* Pruning threshold: a document whose score bound b has b * RK_MARGIN < theta cannot be a hit;
 * when theta is the full heap's worst score (`tie`), neither can b * RK_MARGIN == theta, for
 * documents come in index order and lose ties to every document already kept. */
typedef struct {
    double theta;
    int tie;
} RkBar;

static inline int rk_below(const RkBar *bar, double bound)
{
    bound *= RK_MARGIN;
    return bound < bar->theta || (bar->tie && bound == bar->theta);
}

typedef struct {
    RkCursor *cur;      /* sorted by ub ascending */
    double *prefix;     /* prefix[j]: bound of a document found in cur[0..j] only */
    double *iprefix;    /* the same from block maxima, for the documents of the checked interval */
    double *contrib;    /* per query slot: the candidate's weight, valid where mark == stamp */
    int32_t *mark;      /* per query slot: stamp of the last candidate holding the term */
    ptrdiff_t slots;    /* query terms */
    ptrdiff_t nq;       /* cursors: one per query term */
    ptrdiff_t ne;       /* cur[0..ne) are non-essential: together they cannot reach the bar */
} RkQuery;

static void rk_update_essential(RkQuery *q, const RkBar *bar)
{
    while (q->ne < q->nq && rk_below(bar, q->prefix[q->ne]))
        q->ne++;
}

/* Upper bound of every document in [d, *end] from block maxima, with *end the nearest block end
 * at or after d over all cursors (so each has one block over the interval); a cursor whose next
 * document lies past *end adds nothing. Sets q->iprefix for the interval and moves every cursor
 * to its first document >= d. */
static double rk_interval_bound(const RkIndex *ix, RkQuery *q, int32_t d, int32_t *end)
{
    double bound = 0.0;
    ptrdiff_t j;
    *end = RK_NONE - 1;
    for (j = 0; j < q->nq; j++) {
        RkCursor *c = &q->cur[j];
        rk_advance(ix, c, d);
        if (c->doc == RK_NONE)
            continue;
        rk_seek_block(ix, c, d);  /* the block of pos: rk_next does not move blocks */
        if (ix->blk_last[c->blk] < *end)
            *end = ix->blk_last[c->blk];
    }
    for (j = 0; j < q->nq; j++) {
        if (q->cur[j].doc <= *end)
            bound += ix->blk_max[q->cur[j].blk];
        q->iprefix[j] = bound;
    }
    return bound;
}

/* Score document d (the smallest current document of the essential cursors): the essential
 * cursors that hold it, then the non-essential ones from the largest bound down, stopping as
 * soon as the bound falls under the bar or min_matched cannot be met. 1 when d is fully
 * scored into *hit. */
static int rk_score_candidate(const RkIndex *ix, RkQuery *q, int32_t d, int32_t mm,
                              const RkBar *bar, RkHit *hit)
{
    ptrdiff_t j, i;
    int32_t matched = 0, stamp = d;
    double partial = 0.0, w, s;
    for (j = q->ne; j < q->nq; j++) {
        RkCursor *c = &q->cur[j];
        if (c->doc == d) {
            w = rk_weight(ix, c->term, c->pos);
            q->contrib[c->slot] = w;
            q->mark[c->slot] = stamp;
            partial += w;
            matched++;
            rk_next(ix, c);
        }
    }
    for (j = q->ne - 1; j >= 0; j--) {
        RkCursor *c = &q->cur[j];
        if (rk_below(bar, partial + q->iprefix[j]) || matched + j + 1 < mm)
            return 0;
        rk_advance(ix, c, d);
        if (c->doc == d) {
            w = rk_weight(ix, c->term, c->pos);
            q->contrib[c->slot] = w;
            q->mark[c->slot] = stamp;
            partial += w;
            matched++;
        }
    }
    if (matched < mm)
        return 0;
    s = 0.0;
    for (i = 0; i < q->slots; i++)  /* query order, as the reference sums */
        if (q->mark[i] == stamp)
            s += q->contrib[i];
    hit->score = s;
    hit->doc = d;
    hit->matched = matched;
    return 1;
}

/* A lower bound of the k-th best score, from single lists: any k documents of a list score at
 * least their weight in it (weights are >= 0), so the list's k-th largest weight bounds the
 * k-th best score from below; the stored depth at or above k is smaller still. Valid only
 * when every document of a list is a hit (min_matched <= 1); 0 otherwise. */
static double rk_depth_bound(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq, ptrdiff_t k,
                             int32_t mm)
{
    double best = 0.0, w;
    ptrdiff_t j, level = 0, depth = 2;
    if (mm > 1 || k > RK_DEPTH)
        return 0.0;
    while (depth < k) {
        depth = rk_next_depth(depth);
        level++;
    }
    for (j = 0; j < nq; j++) {
        int32_t t = qterms[j];
        if (k == 1)
            w = ix->term_max[t];
        else if (ix->kth_off[t] + level < ix->kth_off[t + 1])
            w = ix->kth[ix->kth_off[t] + level];
        else
            continue;
        if (w > best)
            best = w;
    }
    return best;
}

/* One cursor per query term, sorted by bound ascending, with the prefix bounds; q's arrays live
 * in one allocation (*mem, freed by the caller). 0, -1 when out of memory. */
static int rk_open_cursors(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq, RkQuery *q,
                           void **mem)
{
    ptrdiff_t j, i;
    RkCursor tmp;
    *mem = malloc((size_t)nq * (sizeof(RkCursor) + 3 * sizeof(double) + sizeof(int32_t)));
    if (*mem == NULL)
        return -1;
    q->cur = (RkCursor *)*mem;
    q->prefix = (double *)(q->cur + nq);
    q->iprefix = q->prefix + nq;
    q->contrib = q->iprefix + nq;
    q->mark = (int32_t *)(q->contrib + nq);
    q->nq = q->slots = nq;
    q->ne = 0;
    for (j = 0; j < nq; j++) {
        RkCursor *c = &q->cur[j];
        int32_t t = qterms[j];
        q->mark[j] = -1;
        c->term = t;
        c->slot = j;
        c->pos = c->base = ix->offsets[t];
        c->end = ix->offsets[t + 1];
        c->doc = c->pos < c->end ? ix->docs[c->pos] : RK_NONE;
        c->blk = c->blk_first = ix->blk_off[t];
        c->blk_end = ix->blk_off[t + 1];
        c->ub = ix->term_max[t];
    }
    for (i = 1; i < nq; i++) {  /* insertion sort: a query has few terms */
        tmp = q->cur[i];
        for (j = i - 1; j >= 0 && q->cur[j].ub > tmp.ub; j--)
            q->cur[j + 1] = q->cur[j];
        q->cur[j + 1] = tmp;
    }
    for (j = 0; j < nq; j++)
        q->iprefix[j] = q->prefix[j] = (j ? q->prefix[j - 1] : 0.0) + q->cur[j].ub;
    return 0;
}

/* Top k (k >= 1): the same hits, scores and order as rk_score_all. Returns the number of
 * hits, -1 when out of memory. */
static ptrdiff_t rk_top_k(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq, int32_t mm,
                          ptrdiff_t k, RkHit *hits)
{
    RkQuery q;
    RkHit hit;
    RkBar bar;
    ptrdiff_t j, nh = 0;
    int32_t d, end, checked_end = -1;
    double theta0 = rk_depth_bound(ix, qterms, nq, k, mm);
    void *mem;
    if (rk_open_cursors(ix, qterms, nq, &q, &mem) < 0)
        return -1;
    bar.theta = theta0 > 0.0 ? theta0 : -1.0;
    bar.tie = 0;
    rk_update_essential(&q, &bar);
    while (q.ne < q.nq) {
        if (q.ne == q.nq - 1 && bar.theta >= 0.0) {
            /* one essential list: step over its postings whose weight cannot lift their document
             * over the bar, within the interval already checked */
            RkCursor *e = &q.cur[q.ne];
            double rest = q.ne ? q.iprefix[q.ne - 1] : 0.0;
            while (e->doc <= checked_end && rk_below(&bar, rk_weight(ix, e->term, e->pos) + rest))
                rk_next(ix, e);
            d = e->doc;
        } else {
            d = RK_NONE;
            for (j = q.ne; j < q.nq; j++)
                if (q.cur[j].doc < d)
                    d = q.cur[j].doc;
        }
        if (d == RK_NONE)
            break;
        if (bar.theta >= 0.0 && d > checked_end) {
            if (rk_below(&bar, rk_interval_bound(ix, &q, d, &end))) {
                for (j = q.ne; j < q.nq; j++)
                    rk_advance(ix, &q.cur[j], end + 1);
                continue;
            }
            checked_end = end;
        }
        if (rk_score_candidate(ix, &q, d, mm, &bar, &hit)) {
            nh = rk_offer(hits, nh, k, &hit);
            if (nh == k && hits[0].score >= bar.theta) {
                bar.theta = hits[0].score;
                bar.tie = 1;
                rk_update_essential(&q, &bar);
            }
        }
    }
    free(mem);
    rk_sort_hits(hits, nh, nh == k);
    return nh;
}

#endif /* RANK_MAXSCORE_H */
