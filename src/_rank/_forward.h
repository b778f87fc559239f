/* Forward index of the frequent terms for the pruned top-k of `_rank._core`
 * (docs/rank-at-scale.md). Portable C99, malloc/free only.
 *
 * The terms whose postings lists hold at least `min_df` documents get a forward slot, most
 * frequent first (slot 0 is the longest list). Every document keeps the (slot, term frequency)
 * pairs of its forwarded terms, sorted by slot, each packed as `slot << 16 | tf` in one
 * uint32_t, in one flat array with per-document offsets. A candidate of the pruned walk then
 * reads its weight in every forwarded query term from one short scan, with the postings' own
 * formula, idf[t] * (tf * k1p1) / (tf + knorm[doc]), instead of probing those lists.
 */
#ifndef RANK_FORWARD_H
#define RANK_FORWARD_H

#include "_topk.h"

/* slots 0 .. RK_FWD_SLOTS - 1: a packed entry never equals the scan's end key UINT32_MAX */
#define RK_FWD_SLOTS 65535

typedef struct {
    int64_t *off;    /* entries of document d: ent[off[d] .. off[d + 1]) */
    uint32_t *ent;   /* slot << 16 | tf, ascending by slot within a document */
    int32_t *slot;   /* per term: its forward slot, -1 when it has none */
    int64_t entries;
    int32_t n_slots;
} RkForward;

static void rk_forward_free(RkForward *f)
{
    free(f->off);
    free(f->ent);
    free(f->slot);
    memset(f, 0, sizeof(*f));
}

/* sort key of term t with df postings: ascending keys put longer lists first, then smaller
 * term ids (df < 2**31 documents) */
static inline uint64_t rk_fwd_key(int64_t df, int64_t t)
{
    return ((uint64_t)(INT32_MAX - df) << 32) | (uint64_t)(uint32_t)t;
}

static int rk_fwd_cmp(const void *a, const void *b)
{
    uint64_t ka = *(const uint64_t *)a, kb = *(const uint64_t *)b;
    return ka < kb ? -1 : (ka > kb);
}

/* The forward index of the terms holding at least min_df postings (the RK_FWD_SLOTS longest if
 * more do), from the postings' counts: `tf` (16 bits) or `tfs` (whole counts as doubles; a
 * count past 65535 in a forwarded term leaves no forward index). Returns 0 with f->slot NULL
 * when no term qualifies, -1 when out of memory (f then freed). */
static int rk_build_forward(const RkIndex *ix, int64_t n_terms, int64_t n_docs, int64_t min_df,
                            const uint16_t *tf, const double *tfs, RkForward *f)
{
    uint64_t *order = NULL;
    int32_t n_slots = 0, s;
    int64_t t, p, d, df, total = 0, *fill = NULL;
    uint32_t count;
    memset(f, 0, sizeof(*f));
    if (min_df < 1)
        min_df = 1;
    order = malloc((size_t)(n_terms > 0 ? n_terms : 1) * sizeof(uint64_t));
    if (order == NULL)
        return -1;
    for (t = 0; t < n_terms; t++) {
        df = ix->offsets[t + 1] - ix->offsets[t];
        if (df >= min_df)
            order[n_slots++] = rk_fwd_key(df, t);
    }
    if (n_slots == 0) {
        free(order);
        return 0;
    }
    qsort(order, (size_t)n_slots, sizeof(uint64_t), rk_fwd_cmp);
    for (s = 0; s < n_slots; s++)  /* keys to term ids */
        order[s] &= 0xFFFFFFFFu;
    if (n_slots > RK_FWD_SLOTS)
        n_slots = RK_FWD_SLOTS;
    for (s = 0; s < n_slots; s++) {
        t = (int64_t)order[s];
        total += ix->offsets[t + 1] - ix->offsets[t];
        if (tfs != NULL)
            for (p = ix->offsets[t]; p < ix->offsets[t + 1]; p++)
                if (tfs[p] > 65535.0) {
                    free(order);
                    return 0;
                }
    }
    f->slot = malloc((size_t)(n_terms > 0 ? n_terms : 1) * sizeof(int32_t));
    f->off = calloc((size_t)(n_docs + 1), sizeof(int64_t));
    f->ent = malloc((size_t)(total > 0 ? total : 1) * sizeof(uint32_t));
    fill = malloc((size_t)(n_docs > 0 ? n_docs : 1) * sizeof(int64_t));
    if (!f->slot || !f->off || !f->ent || !fill)
        goto fail;
    for (t = 0; t < n_terms; t++)
        f->slot[t] = -1;
    for (s = 0; s < n_slots; s++) {
        t = (int64_t)order[s];
        f->slot[t] = s;
        for (p = ix->offsets[t]; p < ix->offsets[t + 1]; p++)
            f->off[ix->docs[p] + 1]++;
    }
    for (d = 0; d < n_docs; d++) {
        f->off[d + 1] += f->off[d];
        fill[d] = f->off[d];
    }
    for (s = 0; s < n_slots; s++) {  /* slot order: each document's entries come out sorted */
        t = (int64_t)order[s];
        for (p = ix->offsets[t]; p < ix->offsets[t + 1]; p++) {
            count = tf != NULL ? (uint32_t)tf[p] : (uint32_t)tfs[p];
            f->ent[fill[ix->docs[p]]++] = ((uint32_t)s << 16) | count;
        }
    }
    f->entries = total;
    f->n_slots = n_slots;
    free(order);
    free(fill);
    return 0;
fail:
    free(order);
    free(fill);
    rk_forward_free(f);
    return -1;
}

#endif /* RANK_FORWARD_H */
