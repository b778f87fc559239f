/* Build-time part of the pruned top-k of `_rank._core`: block bounds and depth bounds over the
 * postings (docs/rank-at-scale.md). Portable C99, malloc/free only.
 */
#ifndef RANK_BOUNDS_H
#define RANK_BOUNDS_H

#include "_topk.h"

typedef struct {
    int64_t *blk_off, *kth_off;
    double *blk_max, *term_max, *kth;
    int32_t *blk_last;
    uint32_t *blk_scale;
} RkBounds;

static void rk_bounds_free(RkBounds *b)
{
    free(b->blk_off);
    free(b->kth_off);
    free(b->blk_max);
    free(b->term_max);
    free(b->kth);
    free(b->blk_last);
    free(b->blk_scale);
    memset(b, 0, sizeof(*b));
}

/* The depth bounds of term t into out (as many levels as the list is deep: each depth <=
 * df); heap is scratch of RK_DEPTH doubles. Returns the number of levels written. */
static ptrdiff_t rk_term_depths(const RkIndex *ix, int32_t t, double *heap, double *out)
{
    int64_t p, start = ix->offsets[t], df = ix->offsets[t + 1] - start;
    ptrdiff_t size = 0, i, child, levels = 0, depth;
    double w, tmp;
    for (p = start; p < start + df; p++) {  /* a min-heap of the RK_DEPTH largest weights */
        w = rk_weight(ix, t, p);
        if (size < RK_DEPTH) {
            for (i = size++; i > 0 && heap[(i - 1) / 2] > w; i = (i - 1) / 2)
                heap[i] = heap[(i - 1) / 2];
            heap[i] = w;
        } else if (w > heap[0]) {
            for (i = 0;; i = child) {
                child = 2 * i + 1;
                if (child >= size)
                    break;
                if (child + 1 < size && heap[child + 1] < heap[child])
                    child++;
                if (heap[child] >= w)
                    break;
                heap[i] = heap[child];
            }
            heap[i] = w;
        }
    }
    for (i = 1; i < size; i++) {  /* descending */
        tmp = heap[i];
        for (child = i - 1; child >= 0 && heap[child] < tmp; child--)
            heap[child + 1] = heap[child];
        heap[child + 1] = tmp;
    }
    for (depth = 2; depth <= size; depth = rk_next_depth(depth))
        out[levels++] = heap[depth - 1];
    return levels;
}

/* RK_BLOCK-posting blocks per term (last document, largest weight, density), each term's
 * largest weight and its depth bounds. ix must view offsets, docs and tf or weights (with idf,
 * knorm, k1p1); its bound fields are set to *b. Returns 0, or -1 when out of memory (b then
 * freed). */
static int rk_build_bounds(RkIndex *ix, int64_t n_terms, RkBounds *b)
{
    int64_t t, n_blk = 0, n_levels = 0, p, blk, depth, df;
    double heap[RK_DEPTH], w;
    memset(b, 0, sizeof(*b));
    b->blk_off = malloc((size_t)(n_terms + 1) * sizeof(int64_t));
    b->kth_off = malloc((size_t)(n_terms + 1) * sizeof(int64_t));
    b->term_max = calloc((size_t)(n_terms + 1), sizeof(double));
    if (!b->blk_off || !b->kth_off || !b->term_max)
        goto fail;
    for (t = 0; t < n_terms; t++) {
        df = ix->offsets[t + 1] - ix->offsets[t];
        b->blk_off[t] = n_blk;
        n_blk += (df + RK_BLOCK - 1) / RK_BLOCK;
        b->kth_off[t] = n_levels;
        for (depth = 2; depth <= df && depth <= RK_DEPTH; depth = rk_next_depth(depth))
            n_levels++;
    }
    b->blk_off[n_terms] = n_blk;
    b->kth_off[n_terms] = n_levels;
    b->blk_last = malloc((size_t)(n_blk + 1) * sizeof(int32_t));
    b->blk_max = calloc((size_t)(n_blk + 1), sizeof(double));
    b->kth = malloc((size_t)(n_levels + 1) * sizeof(double));
    b->blk_scale = calloc((size_t)(n_blk + 1), sizeof(uint32_t));
    if (!b->blk_last || !b->blk_max || !b->kth || !b->blk_scale)
        goto fail;
    for (t = 0; t < n_terms; t++) {
        for (p = ix->offsets[t]; p < ix->offsets[t + 1]; p++) {
            blk = b->blk_off[t] + (p - ix->offsets[t]) / RK_BLOCK;
            w = rk_weight(ix, (int32_t)t, p);
            b->blk_last[blk] = ix->docs[p];
            if (w > b->blk_max[blk])
                b->blk_max[blk] = w;
            if (w > b->term_max[t])
                b->term_max[t] = w;
        }
        for (blk = b->blk_off[t]; blk < b->blk_off[t + 1]; blk++) {
            int64_t first = ix->offsets[t] + (blk - b->blk_off[t]) * RK_BLOCK;
            int64_t span = b->blk_last[blk] - ix->docs[first];
            int64_t n = (blk + 1 < b->blk_off[t + 1] ? RK_BLOCK : ix->offsets[t + 1] - first);
            b->blk_scale[blk] = span > 0 ? (uint32_t)(((n - 1) << 16) / span) : 0;
        }
        rk_term_depths(ix, (int32_t)t, heap, b->kth + b->kth_off[t]);
    }
    ix->blk_off = b->blk_off;
    ix->blk_last = b->blk_last;
    ix->blk_max = b->blk_max;
    ix->blk_scale = b->blk_scale;
    ix->term_max = b->term_max;
    ix->kth_off = b->kth_off;
    ix->kth = b->kth;
    return 0;
fail:
    rk_bounds_free(b);
    return -1;
}

#endif /* RANK_BOUNDS_H */
