// iii-directory — drafts, SHA-256, the linear-space Myers diff, the three-way merge and its conflict blocks (docs/console-page.md, docs/rules/console.md §3.3).
//
// Pure rules: no imports and no React; loading the file touches nothing (no window, document or storage),
// so node's unit tests load it directly (tests/ui/unit). The page loads it with host.importModule
// and hands its exports to the UI modules (page.js `composeRules`).

/** `keep` while a load is in flight, `clear` with no draft or an unchanged one, else `write`. */
export function draftAction({loading, draft, loaded}) {
  if (loading) return 'keep';
  if (draft == null || draft === loaded) return 'clear';
  return 'write';
}

/**
 * The document state for a draft kept in localStorage, given the text on disk now, or null when
 * there is nothing to restore. A draft carries `base` (the text it was opened from) and
 * `base_sha256`; when the disk moved on since, the document is based on `base` and shows the
 * disk text as changed, so Save goes through the compare and the worker's expected-hash guard
 * exactly like a live edit. A draft without a readable base is compared against the disk.
 */
export function restoreDraft(stored, disk) {
  if (!stored || typeof stored.content !== 'string' || stored.content === disk) return null;
  const base = typeof stored.base === 'string'
    && (typeof stored.base_sha256 !== 'string' || sha256Hex(stored.base) === stored.base_sha256) ? stored.base : null;
  if (base === disk) return {loaded: disk, draft: stored.content, banner: null, diskText: null};
  return {loaded: base ?? disk, draft: stored.content, banner: 'changed', diskText: disk};
}

/**
 * The document after a save of the snapshot `sent` came back with `saved` (the file's text now):
 * `loaded` becomes the saved text, and whatever was typed while the save ran stays the draft
 * (still dirty, the next save sends it).
 */
export function afterSave(doc, sent, saved) {
  return {...doc, loaded: saved, draft: doc.draft === sent ? saved : doc.draft};
}

export function splitLines(text) {
  if (text == null || text === '') return [];
  const lines = String(text).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => l.replace(/\r$/, ''));
}

/**
 * A line diff along a Myers shortest edit script (matchingPairs; linear space, so a few edits in a
 * long file stay a few rows at any size). Rows:
 * `{kind: 'same' | 'change' | 'del' | 'add', left, right, leftNo, rightNo}` — a run of deleted
 * lines followed by added lines is paired into `change` rows; `left` / `right` are null on the
 * side a line does not exist.
 */
export function lineDiff(left, right) {
  const a = splitLines(left);
  const b = splitLines(right);
  const ops = [];
  let i = 0;
  let j = 0;
  for (const [pi, pj] of [...matchingPairs(a, b), [a.length, b.length]]) {
    for (; i < pi; i += 1) ops.push(['del', i, null]);
    for (; j < pj; j += 1) ops.push(['add', null, j]);
    if (pi < a.length) ops.push(['same', pi, pj]);
    i = pi + 1;
    j = pj + 1;
  }
  const rows = [];
  let k = 0;
  while (k < ops.length) {
    if (ops[k][0] === 'same') {
      const [, i, j] = ops[k];
      rows.push({kind: 'same', left: a[i], right: b[j], leftNo: i + 1, rightNo: j + 1});
      k += 1;
      continue;
    }
    const dels = [];
    const adds = [];
    while (k < ops.length && ops[k][0] !== 'same') {
      if (ops[k][0] === 'del') dels.push(ops[k][1]); else adds.push(ops[k][2]);
      k += 1;
    }
    const pairs = Math.max(dels.length, adds.length);
    for (let p = 0; p < pairs; p += 1) {
      const i = dels[p];
      const j = adds[p];
      const kind = i != null && j != null ? 'change' : (i != null ? 'del' : 'add');
      rows.push({kind, left: i != null ? a[i] : null, right: j != null ? b[j] : null,
        leftNo: i != null ? i + 1 : null, rightNo: j != null ? j + 1 : null});
    }
  }
  return rows;
}

export const SHA256_K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
  0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
  0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
  0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/**
 * Lowercase hex SHA-256 of the UTF-8 bytes of `text` (FIPS 180-4), computed here because
 * `crypto.subtle` only exists in secure contexts and a console may be served over plain http.
 * The worker's `expected_sha256` guard compares it with the file on disk.
 */
export function sha256Hex(text) {
  const bytes = new TextEncoder().encode(String(text ?? ''));
  const bitLength = bytes.length * 8;
  const padded = new Uint8Array(((bytes.length + 9 + 63) >> 6) << 6);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, Math.floor(bitLength / 0x100000000));
  view.setUint32(padded.length - 4, bitLength >>> 0);
  const hash = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let offset = 0; offset < padded.length; offset += 64) {
    for (let i = 0; i < 16; i += 1) w[i] = view.getUint32(offset + i * 4);
    for (let i = 16; i < 64; i += 1) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, k] = hash;
    for (let i = 0; i < 64; i += 1) {
      const t1 = (k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + SHA256_K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      k = g; g = f; f = e; e = (d + t1) >>> 0; d = c; c = b; b = a; a = (t1 + t2) >>> 0;
    }
    hash[0] = (hash[0] + a) >>> 0; hash[1] = (hash[1] + b) >>> 0; hash[2] = (hash[2] + c) >>> 0; hash[3] = (hash[3] + d) >>> 0;
    hash[4] = (hash[4] + e) >>> 0; hash[5] = (hash[5] + f) >>> 0; hash[6] = (hash[6] + g) >>> 0; hash[7] = (hash[7] + k) >>> 0;
  }
  return hash.map((x) => x.toString(16).padStart(8, '0')).join('');
}

// ------------------------------------------------------------ Myers diff (docs/console-page.md)

/** Each distinct line as a small integer, so the searches compare numbers. */
export function internLines(a, b) {
  const ids = new Map();
  const id = (line) => {
    let v = ids.get(line);
    if (v === undefined) { v = ids.size; ids.set(line, v); }
    return v;
  };
  return [a.map(id), b.map(id)];
}

/**
 * A point on a shortest edit path of a[a0:a1] → b[b0:b1] (Myers 1986 §4b): the forward and
 * reverse greedy searches run one edit distance at a time until their furthest-reaching paths
 * overlap; forward diagonal k (= x − y) meets reverse diagonal delta − k. O(N + M) memory.
 */
export function splitPoint(a, a0, a1, b, b0, b1) {
  const n = a1 - a0;
  const m = b1 - b0;
  const delta = n - m;
  const odd = (delta & 1) !== 0;
  const limit = (n + m + 1) >> 1;
  const size = 2 * limit + 2;
  const offset = limit + 1;
  const fwd = new Int32Array(size).fill(-1);
  const rev = new Int32Array(size).fill(-1);
  fwd[offset + 1] = 0;
  rev[offset + 1] = 0;
  for (let d = 0; d <= limit; d += 1) {
    for (let k = -d; k <= d; k += 2) {
      const i = offset + k;
      let x = k === -d || (k !== d && fwd[i - 1] < fwd[i + 1]) ? fwd[i + 1] : fwd[i - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[a0 + x] === b[b0 + y]) { x += 1; y += 1; }
      fwd[i] = x;
      const j = offset + delta - k;
      if (odd && j >= 0 && j < size && rev[j] !== -1 && x + rev[j] >= n) return [a0 + x, b0 + y];
    }
    for (let k = -d; k <= d; k += 2) {
      const i = offset + k;
      let x = k === -d || (k !== d && rev[i - 1] < rev[i + 1]) ? rev[i + 1] : rev[i - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[a1 - 1 - x] === b[b1 - 1 - y]) { x += 1; y += 1; }
      rev[i] = x;
      const j = offset + delta - k;
      if (!odd && j >= 0 && j < size && fwd[j] !== -1 && fwd[j] + x >= n) return [a0 + fwd[j], b0 + fwd[j] - (delta - k)];
    }
  }
  return [a0, b0];
}

/**
 * Index pairs [i, j] with a[i] === b[j] along a Myers shortest edit script, in order — the same
 * algorithm as the worker's three-way merge, so the page and the worker agree on what changed.
 * Lines found on one side only can never match and are dropped first (rewrites stay cheap); the
 * rest is peeled of its common ends and split at a point of an optimal path, recursively.
 */
export function matchingPairs(a, b) {
  const [fullA, fullB] = internLines(a, b);
  const inB = new Set(fullB);
  const inA = new Set(fullA);
  const keepA = [];
  const keepB = [];
  fullA.forEach((x, i) => { if (inB.has(x)) keepA.push(i); });
  fullB.forEach((x, j) => { if (inA.has(x)) keepB.push(j); });
  const ia = keepA.map((i) => fullA[i]);
  const ib = keepB.map((j) => fullB[j]);
  const pairs = [];
  const solve = (a0, a1, b0, b1) => {
    while (a0 < a1 && b0 < b1 && ia[a0] === ib[b0]) { pairs.push([a0, b0]); a0 += 1; b0 += 1; }
    const suffix = [];
    while (a1 > a0 && b1 > b0 && ia[a1 - 1] === ib[b1 - 1]) { a1 -= 1; b1 -= 1; suffix.push([a1, b1]); }
    if (a0 < a1 && b0 < b1) {
      const [x, y] = splitPoint(ia, a0, a1, ib, b0, b1);
      if (!((x === a0 && y === b0) || (x === a1 && y === b1))) { solve(a0, x, b0, y); solve(x, a1, y, b1); }
    }
    for (let s = suffix.length - 1; s >= 0; s -= 1) pairs.push(suffix[s]);
  };
  solve(0, ia.length, 0, ib.length);
  return pairs.map(([i, j]) => [keepA[i], keepB[j]]);
}

/** For each line of `a`, the index of its partner in `b` along the Myers matching (or -1). */
export function partnersOf(a, b) {
  const partners = new Array(a.length).fill(-1);
  for (const [i, j] of matchingPairs(a, b)) partners[i] = j;
  return partners;
}

export const sameLines = (x, y) => x.length === y.length && x.every((line, i) => line === y[i]);

/**
 * A three-way line merge (diff3): `base` is the text both sides started from, `mine` the draft,
 * `theirs` the file on disk now. Blocks changed on one side only take that side; blocks changed
 * on both sides identically take it once; others become a conflict block
 * `<<<<<<< yours` / `=======` / `>>>>>>> on disk`. Both sides are matched to the base with
 * matchingPairs, the worker's algorithm, so edits that do not overlap merge cleanly at any size.
 * Returns `{text, conflicts}`.
 */
export function merge3(base, mine, theirs) {
  if (mine === theirs || theirs === base) return {text: String(mine ?? ''), conflicts: 0};
  if (mine === base) return {text: String(theirs ?? ''), conflicts: 0};
  const o = splitLines(base);
  const a = splitLines(mine);
  const b = splitLines(theirs);
  const pa = partnersOf(o, a);
  const pb = partnersOf(o, b);
  const out = [];
  let conflicts = 0;
  let i = 0;
  let ia = 0;
  let ib = 0;
  const chunk = (oEnd, aEnd, bEnd) => {
    const co = o.slice(i, oEnd);
    const ca = a.slice(ia, aEnd);
    const cb = b.slice(ib, bEnd);
    if (sameLines(ca, co)) out.push(...cb);
    else if (sameLines(cb, co) || sameLines(ca, cb)) out.push(...ca);
    else { conflicts += 1; out.push('<<<<<<< yours', ...ca, '=======', ...cb, '>>>>>>> on disk'); }
  };
  for (let k = 0; k < o.length; k += 1) {
    if (pa[k] < ia || pb[k] < ib) continue;
    chunk(k, pa[k], pb[k]);
    out.push(o[k]);
    i = k + 1;
    ia = pa[k] + 1;
    ib = pb[k] + 1;
  }
  chunk(o.length, a.length, b.length);
  const trailing = /\n$/.test(String(mine ?? '')) || /\n$/.test(String(theirs ?? ''));
  return {text: out.join('\n') + (out.length && trailing ? '\n' : ''), conflicts};
}

/**
 * The conflict blocks of a merged text, in order: `{open, sep, close, mine, theirs}` where the
 * first three are line indexes of `<<<<<<<`, `=======` and `>>>>>>>` and `mine` / `theirs` the
 * lines between them (a `|||||||` base section is skipped).
 */
export function conflictBlocks(text) {
  if (!String(text ?? '').includes('<<<<<<<')) return [];
  const lines = String(text).split('\n');
  const blocks = [];
  let open = -1;
  let base = -1;
  let sep = -1;
  lines.forEach((line, i) => {
    if (line.startsWith('<<<<<<<')) { open = i; base = -1; sep = -1; }
    else if (open >= 0 && sep < 0 && line.startsWith('|||||||')) base = i;
    else if (open >= 0 && sep < 0 && line.startsWith('=======')) sep = i;
    else if (open >= 0 && sep >= 0 && line.startsWith('>>>>>>>')) {
      blocks.push({open, sep, close: i, mine: lines.slice(open + 1, base >= 0 ? base : sep), theirs: lines.slice(sep + 1, i)});
      open = -1;
    }
  });
  return blocks;
}

/** `text` with its `index`-th conflict block replaced by one side, `'mine'` or `'theirs'`. */
export function takeSide(text, index, side) {
  const block = conflictBlocks(text)[index];
  if (!block) return String(text ?? '');
  const lines = String(text).split('\n');
  lines.splice(block.open, block.close - block.open + 1, ...(side === 'mine' ? block.mine : block.theirs));
  return lines.join('\n');
}

/**
 * Whether a save must wait: the draft holds conflict blocks the text it was based on does not
 * (a skill that documents conflict markers may keep the ones it already had).
 */
export function blocksSave(draft, loaded) {
  return conflictBlocks(draft).length > conflictBlocks(loaded).length;
}
