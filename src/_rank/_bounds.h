/* Build-time part of the pruned top-k of `_rank._core`: impact tiers, block bounds and depth
 * bounds over the postings (docs/rank-at-scale.md). Portable C99, malloc/free only.
 *
 * A long postings list is split into up to three tiers by weight (its top 1/16, the rest of
 * its top 1/4, the remainder), each tier a document-ordered segment with its own largest
 * weight. The pruned path treats every segment as a list of its own: the tiers of a frequent
 * term have small bounds, so they stop being essential early, and the documents it walks are
 * those of the high tiers only.
 */
#ifndef RANK_BOUNDS_H
#define RANK_BOUNDS_H

#include "_topk.h"

/* lists shorter than this stay one segment */
#define RK_TIER_MIN 8192
/* tier 0 holds the postings at or above the (df >> 4)-th largest weight, tier 1 those at or
 * above the (df >> 2)-th largest */
#define RK_TIER0_SHIFT 4
#define RK_TIER1_SHIFT 4
#define RK_TIERS 3

typedef struct {
    int64_t *seg_off, *seg_start, *seg_blk, *kth_off;
    double *seg_max, *blk_max, *term_max, *kth;
    int32_t *blk_last;
} RkBounds;

static void rk_bounds_free(RkBounds *b)
{
    free(b->seg_off);
    free(b->seg_start);
    free(b->seg_blk);
    free(b->kth_off);
    free(b->seg_max);
    free(b->blk_max);
    free(b->term_max);
    free(b->kth);
    free(b->blk_last);
    memset(b, 0, sizeof(*b));
}

/* the k-th largest (1-based) of v[0..n), by quickselect; reorders v */
static double rk_kth_largest(double *v, int64_t n, int64_t k)
{
    int64_t lo = 0, hi = n - 1, i, j, target = k - 1;
    double pivot, tmp;
    while (lo < hi) {
        pivot = v[lo + (hi - lo) / 2];
        i = lo;
        j = hi;
        while (i <= j) {
            while (v[i] > pivot)
                i++;
            while (v[j] < pivot)
                j--;
            if (i <= j) {
                tmp = v[i];
                v[i] = v[j];
                v[j] = tmp;
                i++;
                j--;
            }
        }
        if (target <= j)
            hi = j;
        else if (target >= i)
            lo = i;
        else
            return v[target];
    }
    return v[target];
}

/* The depth bounds of term t into out (as many levels as the list is deep: depth 2^(i+1) <=
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
    for (depth = 2; depth <= size; depth *= 2)
        out[levels++] = heap[depth - 1];
    return levels;
}

/* Top k (k >= 1) by document-at-a-time MaxScore with block-max interval skipping; the same
 * hits, scores and order as rk_score_all. Returns the number of hits, -1 when out of memory. */

typedef struct {
    double *w, *sel, *tmp_w;
    int32_t *tmp_docs;
    uint16_t *tmp_tf;
    unsigned char *tier;
} RkScratch;

/* Split term t into tiers (reordering its postings: docs with tf or weights, stably by tier)
 * and append its segments from *n_seg on. */
static void rk_tier_term(const RkIndex *ix, int32_t t, int32_t *docs, uint16_t *tf,
                         double *weights, RkScratch *s, RkBounds *b, int64_t *n_seg)
{
    int64_t start = ix->offsets[t], df = ix->offsets[t + 1] - start, i, at;
    int64_t count[RK_TIERS] = {0, 0, 0}, pos[RK_TIERS];
    double cut0 = 0.0, cut1 = 0.0;
    int tiers = 1, r;
    b->term_max[t] = 0.0;
    for (i = 0; i < df; i++) {
        s->w[i] = rk_weight(ix, t, start + i);
        if (s->w[i] > b->term_max[t])
            b->term_max[t] = s->w[i];
    }
    if (df >= RK_TIER_MIN) {
        memcpy(s->sel, s->w, (size_t)df * sizeof(double));
        cut0 = rk_kth_largest(s->sel, df, df >> RK_TIER0_SHIFT);
        cut1 = rk_kth_largest(s->sel, df, df >> RK_TIER1_SHIFT);
        tiers = RK_TIERS;
    }
    for (i = 0; i < df; i++) {
        s->tier[i] = (unsigned char)(tiers == 1 || s->w[i] >= cut0 ? 0 : (s->w[i] >= cut1 ? 1 : 2));
        count[s->tier[i]]++;
    }
    for (r = 0, at = 0; r < RK_TIERS; r++) {
        pos[r] = at;
        at += count[r];
    }
    for (i = 0; i < df; i++) {  /* stable: each tier stays in document order */
        at = pos[s->tier[i]]++;
        s->tmp_docs[at] = docs[start + i];
        if (tf != NULL)
            s->tmp_tf[at] = tf[start + i];
        else
            s->tmp_w[at] = weights[start + i];
        s->sel[at] = s->w[i];
    }
    memcpy(docs + start, s->tmp_docs, (size_t)df * sizeof(int32_t));
    if (tf != NULL)
        memcpy(tf + start, s->tmp_tf, (size_t)df * sizeof(uint16_t));
    else
        memcpy(weights + start, s->tmp_w, (size_t)df * sizeof(double));
    b->seg_off[t] = *n_seg;
    for (r = 0, at = 0; r < RK_TIERS; r++) {
        if (count[r] == 0)
            continue;
        b->seg_start[*n_seg] = start + at;
        b->seg_max[*n_seg] = 0.0;
        for (i = at; i < at + count[r]; i++)
            if (s->sel[i] > b->seg_max[*n_seg])
                b->seg_max[*n_seg] = s->sel[i];
        at += count[r];
        (*n_seg)++;
    }
}

/* Tiers, then RK_BLOCK-posting blocks per segment (last document, largest weight), then each
 * term's depth bounds. ix must view offsets, docs and tf or weights (with idf, knorm, k1p1);
 * its bound fields are set to *b. Returns 0, or -1 when out of memory (b then freed). */
static int rk_build_bounds(RkIndex *ix, int64_t n_terms, int32_t *docs, uint16_t *tf,
                           double *weights, RkBounds *b)
{
    int64_t t, max_df = 1, n_seg = 0, n_blk = 0, n_levels = 0, sg, p, blk, depth;
    RkScratch s;
    double heap[RK_DEPTH], w;
    memset(b, 0, sizeof(*b));
    for (t = 0; t < n_terms; t++)
        if (ix->offsets[t + 1] - ix->offsets[t] > max_df)
            max_df = ix->offsets[t + 1] - ix->offsets[t];
    s.w = malloc((size_t)max_df * sizeof(double));
    s.sel = malloc((size_t)max_df * sizeof(double));
    s.tmp_w = tf == NULL ? malloc((size_t)max_df * sizeof(double)) : NULL;
    s.tmp_docs = malloc((size_t)max_df * sizeof(int32_t));
    s.tmp_tf = tf != NULL ? malloc((size_t)max_df * sizeof(uint16_t)) : NULL;
    s.tier = malloc((size_t)max_df);
    b->seg_off = malloc((size_t)(n_terms + 1) * sizeof(int64_t));
    b->seg_start = malloc((size_t)(RK_TIERS * n_terms + 1) * sizeof(int64_t));
    b->seg_max = malloc((size_t)(RK_TIERS * n_terms + 1) * sizeof(double));
    b->term_max = malloc((size_t)(n_terms + 1) * sizeof(double));
    b->kth_off = malloc((size_t)(n_terms + 1) * sizeof(int64_t));
    if (!s.w || !s.sel || (!s.tmp_w && !s.tmp_tf) || !s.tmp_docs || !s.tier || !b->seg_off
        || !b->seg_start || !b->seg_max || !b->term_max || !b->kth_off)
        goto fail;
    for (t = 0; t < n_terms; t++)
        rk_tier_term(ix, (int32_t)t, docs, tf, weights, &s, b, &n_seg);
    b->seg_off[n_terms] = n_seg;
    b->seg_start[n_seg] = ix->offsets[n_terms];
    b->seg_blk = malloc((size_t)(n_seg + 1) * sizeof(int64_t));
    if (!b->seg_blk)
        goto fail;
    for (sg = 0; sg < n_seg; sg++) {
        b->seg_blk[sg] = n_blk;
        n_blk += (b->seg_start[sg + 1] - b->seg_start[sg] + RK_BLOCK - 1) / RK_BLOCK;
    }
    b->seg_blk[n_seg] = n_blk;
    b->blk_last = malloc((size_t)(n_blk + 1) * sizeof(int32_t));
    b->blk_max = calloc((size_t)(n_blk + 1), sizeof(double));
    if (!b->blk_last || !b->blk_max)
        goto fail;
    for (t = 0; t < n_terms; t++) {
        for (sg = b->seg_off[t]; sg < b->seg_off[t + 1]; sg++) {
            for (p = b->seg_start[sg]; p < b->seg_start[sg + 1]; p++) {
                blk = b->seg_blk[sg] + (p - b->seg_start[sg]) / RK_BLOCK;
                w = rk_weight(ix, (int32_t)t, p);
                b->blk_last[blk] = ix->docs[p];
                if (w > b->blk_max[blk])
                    b->blk_max[blk] = w;
            }
        }
        b->kth_off[t] = n_levels;
        for (depth = 2; depth <= ix->offsets[t + 1] - ix->offsets[t] && depth <= RK_DEPTH; depth *= 2)
            n_levels++;
    }
    b->kth_off[n_terms] = n_levels;
    b->kth = malloc((size_t)(n_levels + 1) * sizeof(double));
    if (!b->kth)
        goto fail;
    for (t = 0; t < n_terms; t++)
        rk_term_depths(ix, (int32_t)t, heap, b->kth + b->kth_off[t]);
    ix->seg_off = b->seg_off;
    ix->seg_start = b->seg_start;
    ix->seg_blk = b->seg_blk;
    ix->seg_max = b->seg_max;
    ix->blk_last = b->blk_last;
    ix->blk_max = b->blk_max;
    ix->term_max = b->term_max;
    ix->kth_off = b->kth_off;
    ix->kth = b->kth;
    free(s.w);
    free(s.sel);
    free(s.tmp_w);
    free(s.tmp_docs);
    free(s.tmp_tf);
    free(s.tier);
    return 0;
fail:
    free(s.w);
    free(s.sel);
    free(s.tmp_w);
    free(s.tmp_docs);
    free(s.tmp_tf);
    free(s.tier);
    rk_bounds_free(b);
    return -1;
}

#endif /* RANK_BOUNDS_H */
