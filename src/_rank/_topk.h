/* Query kernels of `_rank._core`: exhaustive scoring and pruned top-k over compact postings.
 *
 * Portable C99 (no intrinsics, no allocation but malloc/free) so the core builds wherever
 * CPython does, armv7/musl included. Every score is summed in query order, term by term, from
 * the same weight formula the plain-Python reference uses, so both answer identically; the
 * pruning only decides which documents are worth summing (docs/rank-at-scale.md).
 */
#ifndef RANK_TOPK_H
#define RANK_TOPK_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* postings per block; a block keeps its last document and its largest weight */
#define RK_BLOCK 64
/* a bound prunes only when bound * RK_MARGIN < threshold: a float sum in another order can
 * exceed the exact sum by a few ulps, never by a relative 1e-9 */
#define RK_MARGIN (1.0 + 1e-9)

typedef struct {
    double score;
    int32_t doc;
    int32_t matched;
} RkHit;

/* A built index. Postings of term t are [offsets[t], offsets[t+1]) in document order. Weights
 * are stored (`weights`, BM25F and any term frequency above 65535) or computed from a 16-bit
 * term frequency: idf[t] * (tf * k1p1) / (tf + knorm[doc]), the reference's `term_weight`. */
typedef struct {
    const int64_t *offsets;
    const int32_t *docs;
    const double *weights;
    const uint16_t *tf;
    const double *idf;
    const double *knorm;
    double k1p1;
    const int64_t *blk_off; /* the blocks of term t are [blk_off[t], blk_off[t+1]) */
    const int32_t *blk_last;
    const double *blk_max;
    const double *term_max;
} RkIndex;

static inline double rk_weight(const RkIndex *ix, int32_t term, int64_t p)
{
    double tf;
    if (ix->weights != NULL)
        return ix->weights[p];
    tf = (double)ix->tf[p];
    return ix->idf[term] * (tf * ix->k1p1) / (tf + ix->knorm[ix->docs[p]]);
}

/* a ranks after b: lower score, or the same score and a higher document index */
static inline int rk_worse(const RkHit *a, const RkHit *b)
{
    return a->score < b->score || (a->score == b->score && a->doc > b->doc);
}

/* restore a heap whose root is its worst hit */
static void rk_sift_down(RkHit *heap, ptrdiff_t size, ptrdiff_t i)
{
    RkHit tmp;
    for (;;) {
        ptrdiff_t child = 2 * i + 1;
        if (child >= size)
            return;
        if (child + 1 < size && rk_worse(&heap[child + 1], &heap[child]))
            child += 1;
        if (!rk_worse(&heap[child], &heap[i]))
            return;
        tmp = heap[i];
        heap[i] = heap[child];
        heap[child] = tmp;
        i = child;
    }
}

static void rk_heapify(RkHit *hits, ptrdiff_t n)
{
    ptrdiff_t i;
    for (i = n / 2 - 1; i >= 0; i--)
        rk_sift_down(hits, n, i);
}

/* sort hits best first: insertion sort for short runs, else heap sort (no allocation) */
static void rk_sort_hits(RkHit *hits, ptrdiff_t n, int is_heap)
{
    ptrdiff_t i, j, end;
    RkHit tmp;
    if (n <= 24) {
        for (i = 1; i < n; i++) {
            tmp = hits[i];
            for (j = i - 1; j >= 0 && rk_worse(&hits[j], &tmp); j--)
                hits[j + 1] = hits[j];
            hits[j + 1] = tmp;
        }
        return;
    }
    if (!is_heap)
        rk_heapify(hits, n);
    /* the root is the worst hit: move it behind the shrinking heap, so the best ends first */
    for (end = n - 1; end > 0; end--) {
        tmp = hits[0];
        hits[0] = hits[end];
        hits[end] = tmp;
        rk_sift_down(hits, end, 0);
    }
}

/* Offer a hit to a top-k heap of nh (< k: filling; == k: full, worst at the root); returns
 * the new count. */
static inline ptrdiff_t rk_offer(RkHit *hits, ptrdiff_t nh, ptrdiff_t k, const RkHit *c)
{
    if (nh < k) {
        hits[nh++] = *c;
        if (nh == k)
            rk_heapify(hits, k);
        return nh;
    }
    if (rk_worse(&hits[0], c)) {
        hits[0] = *c;
        rk_sift_down(hits, k, 0);
    }
    return nh;
}

/* Exhaustive scoring: accumulate every posting of the query terms (term at a time, in query
 * order), keep hits with enough matched terms, select and sort the best k (all when k < 0).
 * scores/matched must be zeroed and are left zeroed; touched and hits hold n_docs entries. */
static ptrdiff_t rk_score_all(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq,
                              int32_t min_matched, ptrdiff_t k, double *scores, int32_t *matched,
                              int32_t *touched, RkHit *hits)
{
    ptrdiff_t t, nt = 0, nh = 0, i;
    int64_t p;
    int32_t d, term;
    RkHit c;
    for (t = 0; t < nq; t++) {
        term = qterms[t];
        for (p = ix->offsets[term]; p < ix->offsets[term + 1]; p++) {
            d = ix->docs[p];
            if (matched[d] == 0)
                touched[nt++] = d;
            scores[d] += rk_weight(ix, term, p);
            matched[d] += 1;
        }
    }
    if (k < 0 || k > nt)
        k = nt;
    for (i = 0; i < nt && k > 0; i++) {
        d = touched[i];
        if (matched[d] < min_matched)
            continue;
        c.score = scores[d];
        c.doc = d;
        c.matched = matched[d];
        nh = rk_offer(hits, nh, k, &c);
    }
    rk_sort_hits(hits, nh, nh == k);
    for (i = 0; i < nt; i++) {
        d = touched[i];
        scores[d] = 0.0;
        matched[d] = 0;
    }
    return nh;
}

/* ------------------------------------------------------------------ pruned top-k (MaxScore) */

typedef struct {
    int64_t pos, end, base;  /* current posting, end of the list, first posting */
    int64_t blk, blk_first, blk_end;
    int32_t term;
    ptrdiff_t slot;          /* position of the term in the query */
    double ub;               /* the term's largest weight */
} RkCursor;

static inline int32_t rk_doc(const RkIndex *ix, const RkCursor *c, int32_t none)
{
    return c->pos < c->end ? ix->docs[c->pos] : none;
}

/* move the block of c to the first one whose last document is >= target; 0 when none is */
static inline int rk_seek_block(const RkIndex *ix, RkCursor *c, int32_t target)
{
    while (c->blk < c->blk_end && ix->blk_last[c->blk] < target)
        c->blk++;
    return c->blk < c->blk_end;
}

/* move c to its first posting with a document >= target */
static inline void rk_advance(const RkIndex *ix, RkCursor *c, int32_t target)
{
    int64_t start;
    if (c->pos >= c->end || ix->docs[c->pos] >= target)
        return;
    if (!rk_seek_block(ix, c, target)) {
        c->pos = c->end;
        return;
    }
    start = c->base + (c->blk - c->blk_first) * RK_BLOCK;
    if (c->pos < start)
        c->pos = start;
    while (ix->docs[c->pos] < target)  /* stops inside the block: its last doc is >= target */
        c->pos++;
}

/* Upper bound of every document in [d, *end] from the block maxima of all lists, with *end the
 * nearest block end at or after d (so each list has one block over the interval). */
static double rk_interval_bound(const RkIndex *ix, RkCursor *cur, ptrdiff_t nq, int32_t d,
                                int32_t *end)
{
    double bound = 0.0;
    ptrdiff_t j;
    *end = INT32_MAX - 1;
    for (j = 0; j < nq; j++) {
        RkCursor *c = &cur[j];
        if (c->pos >= c->end || !rk_seek_block(ix, c, d))
            continue;
        bound += ix->blk_max[c->blk];
        if (ix->blk_last[c->blk] < *end)
            *end = ix->blk_last[c->blk];
    }
    return bound;
}

typedef struct {
    RkCursor *cur;    /* sorted by ub ascending */
    double *prefix;   /* prefix[j] = ub of cur[0..j], summed */
    double *contrib;  /* per query slot: this document's weight, 0 when absent */
    ptrdiff_t nq;
    ptrdiff_t ne;     /* cur[0..ne) are non-essential: together they cannot reach the heap */
} RkQuery;

static void rk_update_essential(RkQuery *q, double theta)
{
    while (q->ne < q->nq && q->prefix[q->ne] * RK_MARGIN < theta)
        q->ne++;
}

/* Score document d (the smallest current document of the essential lists): the essential lists
 * that hold it, then the non-essential ones from the largest bound down, stopping as soon as
 * the bound falls under theta or min_matched cannot be met. 1 when fully scored into *hit. */
static int rk_score_candidate(const RkIndex *ix, RkQuery *q, int32_t d, int32_t mm, int full,
                              double theta, RkHit *hit)
{
    ptrdiff_t j, i;
    int32_t matched = 0;
    double partial = 0.0, w, s;
    int ok = 1;
    for (j = q->ne; j < q->nq; j++) {
        RkCursor *c = &q->cur[j];
        if (c->pos < c->end && ix->docs[c->pos] == d) {
            w = rk_weight(ix, c->term, c->pos);
            q->contrib[c->slot] = w;
            partial += w;
            matched++;
            c->pos++;
        }
    }
    for (j = q->ne - 1; j >= 0; j--) {
        RkCursor *c = &q->cur[j];
        if ((full && (partial + q->prefix[j]) * RK_MARGIN < theta) || matched + j + 1 < mm) {
            ok = 0;
            break;
        }
        rk_advance(ix, c, d);
        if (c->pos < c->end && ix->docs[c->pos] == d) {
            w = rk_weight(ix, c->term, c->pos);
            q->contrib[c->slot] = w;
            partial += w;
            matched++;
        }
    }
    if (ok && matched >= mm) {
        s = 0.0;
        for (i = 0; i < q->nq; i++)  /* query order, as the reference sums */
            s += q->contrib[i];
        hit->score = s;
        hit->doc = d;
        hit->matched = matched;
    } else {
        ok = 0;
    }
    for (i = 0; i < q->nq; i++)
        q->contrib[i] = 0.0;
    return ok;
}

static void rk_sort_cursors(RkCursor *cur, ptrdiff_t n)
{
    ptrdiff_t i, j;
    RkCursor tmp;
    for (i = 1; i < n; i++) {
        tmp = cur[i];
        for (j = i - 1; j >= 0 && (cur[j].ub > tmp.ub || (cur[j].ub == tmp.ub && cur[j].slot > tmp.slot)); j--)
            cur[j + 1] = cur[j];
        cur[j + 1] = tmp;
    }
}

/* Top k (k >= 1) by document-at-a-time MaxScore with block-max interval skipping; the same
 * hits, scores and order as rk_score_all. Returns the number of hits, -1 when out of memory. */
static ptrdiff_t rk_top_k(const RkIndex *ix, const int32_t *qterms, ptrdiff_t nq,
                          int32_t mm, ptrdiff_t k, RkHit *hits)
{
    const int32_t none = INT32_MAX;
    RkQuery q;
    RkHit hit;
    ptrdiff_t j, nh = 0;
    int32_t d, end, checked_end = -1;
    double theta = -1.0;
    void *mem = malloc((size_t)nq * (sizeof(RkCursor) + 2 * sizeof(double)));
    if (mem == NULL)
        return -1;
    q.cur = (RkCursor *)mem;
    q.prefix = (double *)(q.cur + nq);
    q.contrib = q.prefix + nq;
    q.nq = nq;
    q.ne = 0;
    for (j = 0; j < nq; j++) {
        RkCursor *c = &q.cur[j];
        c->term = qterms[j];
        c->slot = j;
        c->pos = c->base = ix->offsets[qterms[j]];
        c->end = ix->offsets[qterms[j] + 1];
        c->blk = c->blk_first = ix->blk_off[qterms[j]];
        c->blk_end = ix->blk_off[qterms[j] + 1];
        c->ub = ix->term_max[qterms[j]];
        q.contrib[j] = 0.0;
    }
    rk_sort_cursors(q.cur, nq);
    for (j = 0; j < nq; j++)
        q.prefix[j] = (j ? q.prefix[j - 1] : 0.0) + q.cur[j].ub;
    while (q.ne < nq) {
        d = none;
        for (j = q.ne; j < nq; j++) {
            int32_t cd = rk_doc(ix, &q.cur[j], none);
            if (cd < d)
                d = cd;
        }
        if (d == none)
            break;
        if (nh == k && d > checked_end) {
            if (rk_interval_bound(ix, q.cur, nq, d, &end) * RK_MARGIN < theta) {
                for (j = q.ne; j < nq; j++)
                    rk_advance(ix, &q.cur[j], end + 1);
                continue;
            }
            checked_end = end;
        }
        if (rk_score_candidate(ix, &q, d, mm, nh == k, theta, &hit)) {
            nh = rk_offer(hits, nh, k, &hit);
            if (nh == k) {
                theta = hits[0].score;
                rk_update_essential(&q, theta);
            }
        }
    }
    free(mem);
    rk_sort_hits(hits, nh, nh == k);
    return nh;
}

#endif /* RANK_TOPK_H */
