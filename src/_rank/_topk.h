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

/* postings per block; a block keeps its last document, its largest weight and its density
 * (chosen: the in-block interpolation makes a long block cheap to search, and fewer blocks mean
 * fewer interval checks and block seeks; measured in docs/rank-at-scale.md) */
#define RK_BLOCK 256
/* depth bounds: each term keeps its 2nd, 3rd, ... RK_EXACT_DEPTH-th largest weight, then every
 * power of two up to RK_DEPTH (the common k are exact, a larger k rounds up) */
#define RK_EXACT_DEPTH 16
#define RK_DEPTH 64

static inline ptrdiff_t rk_next_depth(ptrdiff_t depth)
{
    return depth < RK_EXACT_DEPTH ? depth + 1 : 2 * depth;
}
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
    /* the pruning bounds (_bounds.h): the postings of term t form the blocks [blk_off[t],
     * blk_off[t+1]) of RK_BLOCK postings (the last one shorter) */
    const int64_t *blk_off;
    const int32_t *blk_last;
    const double *blk_max;
    /* postings per document of each block, 16.16 fixed point: (n - 1) / (last - first) */
    const uint32_t *blk_scale;
    const double *term_max;
    const int64_t *kth_off; /* depth bounds of term t: kth[kth_off[t] .. kth_off[t+1]) */
    const double *kth;
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
        if (nh == k && (c.score < hits[0].score || (c.score == hits[0].score && d > hits[0].doc)))
            continue;  /* worse than the worst kept hit: the common case, decided here */
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

#endif /* RANK_TOPK_H */
