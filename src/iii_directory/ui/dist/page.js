// iii-directory — the Directory page for the iii console (docs/rules/console.md §3–§4).
//
// Hand-written ES module: no static imports, no build step. React arrives through the console's
// import map inside setup(); top-level code only defines constants and functions, so node can
// import this file for the unit tests of the pure rules (tests/ui/unit).

export const PAGE_VERSION = '0.1.0';
export const MODULE_API = 1;
export const COLLECTIONS = ['skills', 'agents', 'kits'];

/** Console components the adapters may take from host.components; remove a name to switch it off. */
export const CONSOLE_COMPONENTS = ['Button', 'Input', 'Dialog', 'MarkdownPreview', 'CodeEditor'];

// ============================================================================ pure rules (§3.5)

/** `1 profile`, `2 profiles`, `0 profiles`. */
export function plural(n, word, many) {
  return `${n} ${n === 1 ? word : (many || `${word}s`)}`;
}

/** The rejection text without a leading `remote error (<x>): ` and then `handler error: `. */
export function cleanError(error) {
  let text = error == null ? '' : (typeof error === 'string' ? error : (error.message ?? String(error)));
  text = String(text).replace(/^remote error \([^)]*\):\s*/, '');
  text = text.replace(/^handler error:\s*/, '');
  return text;
}

function toMillis(now) {
  if (now == null) return Date.now();
  if (now instanceof Date) return now.getTime();
  return typeof now === 'number' ? now : Date.parse(now);
}

/** `just now` under a minute, `<n> min ago`, `<n> h ago`, `<n> d ago`; bad input → ''. */
export function formatAgo(iso, now) {
  if (!iso || typeof iso !== 'string') return '';
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const seconds = Math.max(0, (toMillis(now) - then) / 1000);
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** `<n> B` below 1024, `<x.y> KB` below 1 MiB, `<x.y> MB` above (1024-based). */
export function formatSize(bytes) {
  const n = Number(bytes) || 0;
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** Deep-link parsing (§4.2); null when the context changes nothing. */
export function routeFromContext(context) {
  if (!context || typeof context !== 'object' || Array.isArray(context)) return null;
  const {collection} = context;
  if (collection === 'kits') {
    if (typeof context.plan_id === 'string' && context.plan_id) return {collection, route: {name: 'plan', planId: context.plan_id}};
    if (typeof context.kit === 'string' && context.kit) return {collection, route: {name: 'kit', kit: context.kit}};
    return {collection, route: {name: 'home'}};
  }
  if (collection === 'skills' || collection === 'agents') {
    if (typeof context.key === 'string' && context.key) return {collection, key: context.key};
    if (context.action === 'create') return {collection, action: 'create'};
  }
  return null;
}

/** Which panes show: wide → both; narrow → the document while creating or with a selection. */
export function narrowPanes({narrow, creating, selected}) {
  if (!narrow) return {list: true, document: true};
  if (creating || selected) return {list: false, document: true};
  return {list: true, document: false};
}

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

/** The origin line of an agent profile row (§4.3). */
export function originLabel(row, now) {
  const source = (row && row.source) || {kind: row && row.builtin ? 'builtin' : 'local'};
  const ago = formatAgo(row && row.modified_at, now);
  const tail = ago ? ` · ${ago}` : '';
  const edited = source.modified ? ' · edited' : '';
  switch (source.kind) {
    case 'kit': return `kit ${source.kit ?? ''}${edited}${tail}`;
    case 'worker': return `worker ${source.worker ?? ''}${edited}${tail}`;
    case 'global': return `global${tail}`;
    case 'builtin': return 'Built-in · edits save a local override';
    default: return `local${tail}`;
  }
}

// ---------------------------------------------------------------- frontmatter (§4.4)

const KEY_LINE = /^([A-Za-z_][A-Za-z0-9_.-]*):(?:[ \t]+(.*)|[ \t]*)$/;

function unquote(value) {
  const v = value.trim();
  if (v.length >= 2 && v[0] === '"' && v[v.length - 1] === '"') {
    try { return JSON.parse(v); } catch { return v.slice(1, -1); }
  }
  if (v.length >= 2 && v[0] === "'" && v[v.length - 1] === "'") return v.slice(1, -1).replace(/''/g, "'");
  return v;
}

function scalar(value) {
  const v = value.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  if (v.startsWith('[') && v.endsWith(']')) {
    const inner = v.slice(1, -1).trim();
    return inner ? splitInline(inner).map(unquote) : [];
  }
  return unquote(v);
}

function splitInline(text) {
  const out = [];
  let quote = null;
  let current = '';
  for (const ch of text) {
    if (quote) {
      current += ch;
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current += ch;
    } else if (ch === ',') {
      out.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  out.push(current);
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** Split text into lines that keep their line endings. */
function rawLines(text) {
  const out = [];
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\n') {
      out.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < text.length) out.push(text.slice(start));
  return out;
}

const stripEol = (line) => line.replace(/\r?\n$/, '');

const BLOCK_HEADER = /^([|>])(?:([1-9])([+-])?|([+-])([1-9])?)?(?:[ \t]+#.*)?$/;

/**
 * The value of a YAML block scalar (YAML 1.2 §8.1–§8.2), or undefined when `header` is not one.
 * `header` is `|` (literal) or `>` (folded), then optionally a chomping indicator (`-` strip the
 * final line breaks, `+` keep them all, none: keep one) and an indentation indicator, in either
 * order; `lines` are the raw lines under the key. Literal keeps every line break; folded joins
 * neighbouring lines at the content indentation with a space, and keeps the breaks of empty and
 * more-indented lines. Why: `description: |` must show the text, never `|`.
 */
export function blockScalar(header, lines, parentIndent = 0) {
  const m = BLOCK_HEADER.exec(String(header).trim());
  if (!m) return undefined;
  const folded = m[1] === '>';
  const chomp = m[3] || m[4] || '';
  const texts = lines.map(stripEol);
  let indent = parentIndent + Number(m[2] || m[5] || 0);
  if (indent === parentIndent) {
    const first = texts.find((t) => t.trim() !== '');
    indent = first === undefined ? parentIndent + 1 : first.length - first.replace(/^ +/, '').length;
  }
  const body = [];
  for (const t of texts) {
    const lead = t.length - t.replace(/^ +/, '').length;
    if (t.trim() === '' && lead <= indent) body.push('');
    else if (lead < indent) break;
    else body.push(t.slice(indent));
  }
  let trailing = 0;
  while (body.length && body[body.length - 1] === '') { body.pop(); trailing += 1; }
  let out = '';
  let seen = false;
  let prevMore = false;
  let empties = 0;
  for (const line of body) {
    if (line === '') { empties += 1; continue; }
    const more = /^[ \t]/.test(line);
    if (!seen) out += '\n'.repeat(empties);
    else if (!folded || more || prevMore) out += '\n'.repeat(1 + empties);
    else out += empties ? '\n'.repeat(empties) : ' ';
    out += line;
    seen = true;
    prevMore = more;
    empties = 0;
  }
  if (chomp === '-') return out;
  if (chomp === '+') return out + '\n'.repeat((seen ? 1 : 0) + trailing + (seen ? 0 : empties));
  return seen ? `${out}\n` : '';
}

/**
 * A frontmatter block exists only when the text starts with `---\n` / `---\r\n`; it ends at the
 * first line that is exactly `---` (followed by a line break or the end of the text). Returns
 * `{hasBlock, fields, extents, lines, body, eol, head, tail}`: `lines` are the raw inner lines,
 * `extents[key] = {start, end}` line indexes into `lines` (end exclusive), `head` the opening fence
 * and `tail` the closing fence with its line break, so head + lines + tail + body === text.
 */
export function parseFrontmatter(text) {
  const source = typeof text === 'string' ? text : '';
  const eol = source.startsWith('---\r\n') ? '\r\n' : '\n';
  const empty = {hasBlock: false, fields: {}, extents: {}, lines: [], body: source, eol, head: '', tail: ''};
  if (!(source.startsWith('---\n') || source.startsWith('---\r\n'))) return empty;
  const lines = rawLines(source);
  let close = -1;
  for (let i = 1; i < lines.length; i += 1) {
    const bare = stripEol(lines[i]);
    if (bare === '---' && (lines[i] !== bare || i === lines.length - 1)) { close = i; break; }
  }
  if (close < 0) return empty;
  const inner = lines.slice(1, close);
  const fields = {};
  const extents = {};
  for (let i = 0; i < inner.length; i += 1) {
    const match = KEY_LINE.exec(stripEol(inner[i]));
    if (!match) continue;
    const key = match[1];
    let end = i + 1;
    while (end < inner.length && /^([ \t]|\r?\n$|$)/.test(inner[end]) && !KEY_LINE.test(stripEol(inner[end]))) end += 1;
    const block = match[2] === undefined ? undefined : blockScalar(match[2], inner.slice(i + 1, end));
    while (end > i + 1 && stripEol(inner[end - 1]).trim() === '') end -= 1;
    extents[key] = {start: i, end};
    const rest = match[2] === undefined ? '' : match[2];
    if (block !== undefined) {
      fields[key] = block;
    } else if (rest.trim() === '') {
      const items = [];
      for (let j = i + 1; j < end; j += 1) {
        const item = /^[ \t]*-[ \t]*(.*)$/.exec(stripEol(inner[j]));
        if (item) items.push(unquote(item[1]));
      }
      fields[key] = items.length ? items : (end > i + 1 ? [] : null);
    } else {
      fields[key] = scalar(rest);
    }
    i = end - 1;
  }
  return {
    hasBlock: true, fields, extents, lines: inner, eol,
    head: lines[0], tail: lines[close], body: lines.slice(close + 1).join(''),
  };
}

/**
 * The first markdown heading of a text outside fenced code blocks: `{index, text}` (`index` is
 * the line) or null. A skill without a front-matter title is titled by it, as the worker titles
 * it, so the Title field shows and edits that heading.
 */
export function firstHeading(text) {
  const lines = rawLines(String(text ?? ''));
  let fence = null;
  for (let i = 0; i < lines.length; i += 1) {
    const line = stripEol(lines[i]);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (marker) {
      if (!fence) fence = marker[1][0];
      else if (marker[1][0] === fence) fence = null;
      continue;
    }
    const heading = fence ? null : /^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$/.exec(line);
    if (heading && heading[1]) return {index: i, text: heading[1]};
  }
  return null;
}

/** `text` with its first heading's words replaced by `title`, its level and line ending kept. */
export function setFirstHeading(text, title) {
  const found = firstHeading(text);
  if (!found) return String(text ?? '');
  const lines = rawLines(String(text));
  const line = lines[found.index];
  const eol = line.slice(stripEol(line).length);
  const hashes = /^ {0,3}#{1,6}/.exec(line)[0];
  lines[found.index] = `${hashes} ${title}${eol}`;
  return lines.join('');
}

/** The key of the row to focus after `key`'s row goes away: the next row, else the one before. */
export function neighbourKey(items, key) {
  const rows = (items || []).filter((item) => item.type !== 'group');
  const at = rows.findIndex((item) => item.key === key);
  if (at < 0) return null;
  return (rows[at + 1] || rows[at - 1] || {}).key ?? null;
}

const SPECIAL_START = '-?:,[]{}#&*!|>\'"%@`';

/** Whether a string may be written as a bare YAML scalar (§4.4). */
export function isBareScalar(value) {
  if (typeof value !== 'string' || value === '') return false;
  if (value !== value.trim()) return false;
  if (SPECIAL_START.includes(value[0])) return false;
  if (value.includes(': ') || value.includes(' #') || /[\r\n]/.test(value) || value.endsWith(':')) return false;
  if (['true', 'false', 'null', '~'].includes(value.toLowerCase())) return false;
  if (/^[-+]?(\d[\d_]*\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) || /^0[xo][0-9a-f]+$/i.test(value)) return false;
  return true;
}

function yamlScalar(value) {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  const text = String(value);
  return isBareScalar(text) ? text : JSON.stringify(text);
}

function renderField(key, value, eol) {
  if (Array.isArray(value)) return [`${key}:${eol}`, ...value.map((item) => `  - ${yamlScalar(item)}${eol}`)];
  return [`${key}: ${yamlScalar(value)}${eol}`];
}

const removes = (value) => value == null || value === '' || (Array.isArray(value) && value.length === 0);

/**
 * Rewrite only the changed keys of the frontmatter: a changed key's extent is replaced in place,
 * a null / empty value removes it, a new key is appended before the closing fence, and a text
 * without frontmatter gets a new block at the top. Every other byte stays as it was.
 * `changes.body` (a string), when given, replaces the body.
 */
export function setFrontmatterFields(text, changes) {
  const parsed = parseFrontmatter(text);
  const entries = Object.entries(changes || {}).filter(([key]) => key !== 'body');
  const body = typeof (changes || {}).body === 'string' ? changes.body : parsed.body;
  const {eol} = parsed;
  if (!parsed.hasBlock) {
    const lines = entries.filter(([, v]) => !removes(v)).flatMap(([k, v]) => renderField(k, v, eol));
    if (!lines.length) return body;
    return `---${eol}${lines.join('')}---${eol}${body}`;
  }
  const lines = parsed.lines.slice();
  const replacements = [];
  const appended = [];
  for (const [key, value] of entries) {
    const extent = parsed.extents[key];
    const rendered = removes(value) ? [] : renderField(key, value, eol);
    if (extent) replacements.push({extent, rendered});
    else if (rendered.length) appended.push(...rendered);
  }
  replacements.sort((a, b) => b.extent.start - a.extent.start);
  for (const {extent, rendered} of replacements) lines.splice(extent.start, extent.end - extent.start, ...rendered);
  if (appended.length && lines.length && !/\n$/.test(lines[lines.length - 1])) lines[lines.length - 1] += eol;
  return parsed.head + lines.join('') + appended.join('') + parsed.tail + body;
}

/** `{added, removed}` between two function lists, each in list order. */
export function functionsEdit(before, after) {
  const was = new Set(before || []);
  const now = new Set(after || []);
  return {
    added: (after || []).filter((id, i, all) => !was.has(id) && all.indexOf(id) === i),
    removed: (before || []).filter((id, i, all) => !now.has(id) && all.indexOf(id) === i),
  };
}

// ------------------------------------------------------------- palette and small labels

/** Skills first, then agent profiles, each in list order; at most 30 rows (§4.16). */
export function paletteRows(skills, agents, query) {
  const q = String(query || '').trim().toLowerCase();
  const rows = [];
  const hit = (...texts) => !q || texts.some((t) => typeof t === 'string' && t.toLowerCase().includes(q));
  for (const s of skills || []) {
    const title = s.title || s.id;
    if (hit(title, s.id, s.description)) rows.push({id: `skills:${s.id}`, title, detail: s.description || '', meta: 'Skill', collection: 'skills', key: s.id});
  }
  for (const a of agents || []) {
    const title = a.name || a.id;
    if (hit(title, a.id, a.description)) rows.push({id: `agents:${a.id}`, title, detail: a.description || '', meta: 'Agent profile', collection: 'agents', key: a.id});
  }
  return rows.slice(0, 30);
}

/** The install form's check: `author/kit` with an optional `@<version>`. */
export function isKitReference(text) {
  return /^[a-z0-9-]+\/[a-z0-9-]+(@\S+)?$/.test(String(text || '').trim());
}

/** `''` for 0, `'1'`…`'9'`, `'9+'` above 9. */
export function attentionBadge(n) {
  const count = Number(n) || 0;
  if (count <= 0) return '';
  return count > 9 ? '9+' : String(count);
}

// ---------------------------------------------------------------------------- line diff

function splitLines(text) {
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

/** A line starting with `<<<<<<<` followed later by a line starting with `>>>>>>>`. */
export function hasConflictMarkers(text) {
  const lines = String(text || '').split('\n');
  const open = lines.findIndex((l) => l.startsWith('<<<<<<<'));
  if (open < 0) return false;
  return lines.slice(open + 1).some((l) => l.startsWith('>>>>>>>'));
}

// ----------------------------------------------------------------- review rules (§4.14)

/** The user's choice for the file's path (its `choice` when an object), else `file.default`. */
export function effectiveDecision(file, choices) {
  const choice = choices ? choices[file.path] : undefined;
  if (choice != null) return typeof choice === 'object' ? (choice.choice ?? null) : choice;
  return file.default ?? null;
}

function chosenText(file, choices) {
  const choice = choices ? choices[file.path] : undefined;
  return choice && typeof choice === 'object' && typeof choice.content === 'string' ? choice.content : null;
}

/** Files still needing a decision: no effective decision, or a conflicted merge without clean text. */
export function unresolvedFiles(plan, choices) {
  return ((plan && plan.files) || []).filter((file) => {
    const decision = effectiveDecision(file, choices);
    if (decision == null) return true;
    if (file.merge === 'conflicts' && decision === 'merged') {
      const text = chosenText(file, choices);
      return text == null || hasConflictMarkers(text);
    }
    return false;
  });
}

const collapse = (text) => text.replace(/\s+/g, ' ').trim();
const withVersion = (name, version) => (version ? `${name} ${version}` : name);

/** Who owns the file a plan would replace (§4.14). */
export function ownerPhrase(collision) {
  const c = collision || {};
  switch (c.owner) {
    case 'worker': return `came from worker ${withVersion(c.worker ?? '', c.version)}${c.modified ? ' (edited here)' : ''}`;
    case 'kit': return `belongs to kit ${withVersion(c.kit ?? '', c.version)}`;
    case 'local': return 'created in this project — not from any package';
    case 'global': return 'your user-global profile (~/.iii/agents)';
    case 'builtin': return 'built into iii-directory';
    default: return '';
  }
}

/** One line per plan worker describing what happens to it (§4.14). */
export function workerLine(worker) {
  const w = worker || {};
  const name = w.name ?? '';
  switch (w.action) {
    case 'add': return collapse(`New worker ${name} ${w.range ?? ''} → ${w.to || 'latest'}`);
    case 'update': return collapse(`${name} ${w.installed ?? ''} → ${w.to ?? ''} (the kit asks ${w.range ?? ''})`);
    case 'redeclare': return collapse(`${name} range ${w.range_from ?? ''} → ${w.range ?? ''} (${w.installed ?? ''} already satisfies it)`);
    case 'remove': return collapse(`${name} is no longer part of the kit`);
    default:
      if (w.path) return collapse(`${name} runs from a local path; the kit asks ${w.range ?? ''}`);
      return collapse(`${name} ${w.installed ?? ''} satisfies ${w.range ?? ''}`);
  }
}

/** The label of one decision option of a file (§4.14). */
export function decisionLabel(file, decision) {
  const f = file || {};
  switch (decision) {
    case 'overwrite': return f.change === 'kept' ? "Take the kit's version" : 'Replace';
    case 'keep': return f.change === 'removed' ? 'Keep as a local file' : 'Keep the current one';
    case 'kit': return "Use the kit's version";
    case 'mine': return f.local === 'missing' ? 'Keep it deleted' : 'Keep mine';
    case 'merged': return 'Use the merged result';
    case 'remove': return 'Remove';
    default: return String(decision ?? '');
  }
}

/** Functions grouped by worker (else id prefix); named groups sorted, unknown ones last. */
export function groupFunctions(functions) {
  const named = new Map();
  const unknown = [];
  for (const fn of functions || []) {
    if (fn.status === 'unknown') { unknown.push(fn); continue; }
    const id = fn.id || '';
    const group = fn.worker || (id.includes('::') ? id.slice(0, id.indexOf('::')) : id);
    if (!named.has(group)) named.set(group, []);
    named.get(group).push(fn);
  }
  const byId = (x, y) => String(x.id).localeCompare(String(y.id));
  const groups = [...named.keys()].sort().map((name) => ({name, unknown: false, functions: named.get(name).sort(byId)}));
  if (unknown.length) groups.push({name: 'unknown', unknown: true, functions: unknown.sort(byId)});
  return groups;
}

/** Skill files grouped by the first folder under `skills/<handle>/<kit>/`; root files first. */
export function skillGroups(files) {
  const root = [];
  const groups = new Map();
  for (const file of files || []) {
    if (file.kind !== 'skill') continue;
    const rest = String(file.path).split('/').slice(3);
    if (rest.length <= 1) root.push(file);
    else {
      if (!groups.has(rest[0])) groups.set(rest[0], []);
      groups.get(rest[0]).push(file);
    }
  }
  const byPath = (x, y) => String(x.path).localeCompare(String(y.path));
  const out = [];
  if (root.length) out.push({name: '', files: root.sort(byPath)});
  for (const name of [...groups.keys()].sort()) out.push({name, files: groups.get(name).sort(byPath)});
  return out;
}

function replacedCounts(plan, choices) {
  let profiles = 0;
  let files = 0;
  for (const file of (plan && plan.files) || []) {
    if (!file.collision || effectiveDecision(file, choices) !== 'overwrite') continue;
    if (String(file.path).startsWith('agents/')) profiles += 1; else files += 1;
  }
  return {profiles, files};
}

/** `P existing profile(s) and F existing file(s) will be replaced` (or one part, or none). */
export function collisionHeadline(plan, choices) {
  const {profiles, files} = replacedCounts(plan, choices);
  const parts = [];
  if (profiles) parts.push(`${plural(profiles, 'existing profile')}`);
  if (files) parts.push(`${plural(files, 'existing file')}`);
  if (!parts.length) return 'No existing file will be replaced';
  return `${parts.join(' and ')} will be replaced`;
}

/** `Install`, or `Install and replace P profile(s)[ and F file(s)]`. */
export function installPrimaryLabel(plan, choices) {
  const {profiles, files} = replacedCounts(plan, choices);
  const parts = [];
  if (profiles) parts.push(plural(profiles, 'profile'));
  if (files) parts.push(plural(files, 'file'));
  return parts.length ? `Install and replace ${parts.join(' and ')}` : 'Install';
}

// ---------------------------------------------------------------- update rules (§4.10)

function fileLabel(file) {
  if (file.kind === 'agent') return file.id || String(file.path).replace(/^agents\//, '').replace(/\.md$/, '');
  return String(file.path).replace(/^skills\//, '').replace(/\.md$/, '');
}

function fileSign(file) {
  if (file.change === 'added') return '+';
  if (file.change === 'removed') return '−';
  return '~';
}

function workerState(worker) {
  if (!worker.range) return 'dropped';
  if (worker.action === 'add') return 'new';
  if (worker.action === 'update') return `${worker.range} → ${worker.to ?? ''}`.trim();
  return `${worker.range_from ?? ''} → ${worker.range}`;
}

function grantsAnything(capabilities) {
  const c = capabilities || {};
  return ['workers_added', 'functions_added', 'models_changed'].some((k) => Array.isArray(c[k]) && c[k].length > 0);
}

/** The update review's groups, in the order of §4.10, empty groups skipped. */
export function updateGroups(plan) {
  const files = (plan && plan.files) || [];
  const workers = (plan && plan.workers) || [];
  const fileRow = (file) => ({key: `file:${file.path}`, type: 'file', sign: fileSign(file), label: fileLabel(file), file});
  const workerRow = (worker) => ({key: `worker:${worker.name}`, type: 'worker', sign: !worker.range ? '−' : (worker.action === 'add' ? '+' : '~'),
    label: worker.name, state: workerState(worker), worker});
  const ofKind = (kind, changes) => files.filter((f) => f.kind === kind && changes.includes(f.change)).map(fileRow);
  const ranged = (w) => w.range && (w.action === 'update' || w.action === 'redeclare' || (w.action === 'none' && w.range_from && w.range_from !== w.range));
  const groups = [
    {id: 'new-profiles', title: 'New profiles', rows: ofKind('agent', ['added'])},
    {id: 'changed-profiles', title: 'Changed profiles', rows: ofKind('agent', ['modified', 'kept'])},
    {id: 'removed-profiles', title: 'Removed profiles', rows: ofKind('agent', ['removed'])},
    {id: 'new-workers', title: 'New workers', rows: workers.filter((w) => w.range && w.action === 'add').map(workerRow)},
    {id: 'worker-ranges', title: 'Worker ranges', rows: workers.filter(ranged).map(workerRow)},
    {id: 'workers-dropped', title: 'Workers dropped', rows: workers.filter((w) => !w.range).map(workerRow)},
    {id: 'new-skills', title: 'New skills', rows: ofKind('skill', ['added'])},
    {id: 'changed-skills', title: 'Changed skills', rows: ofKind('skill', ['modified', 'kept'])},
    {id: 'removed-skills', title: 'Removed skills', rows: ofKind('skill', ['removed'])},
    {id: 'permissions', title: 'Permissions', rows: grantsAnything(plan && plan.capabilities)
      ? [{key: 'permissions', type: 'permissions', sign: '!', label: 'What this update grants', state: permissionTally(plan.capabilities)}] : []},
  ];
  return groups.filter((g) => g.rows.length > 0);
}

/** File and worker rows of the update review (the permissions row is not counted). */
export function changeCount(plan) {
  return updateGroups(plan).reduce((n, g) => n + g.rows.filter((r) => r.type !== 'permissions').length, 0);
}

/** The state word of a file row in the update review (§4.10). */
export function fileStateWord(file, choices) {
  const decision = effectiveDecision(file, choices);
  switch (file.change) {
    case 'added': return 'new';
    case 'kept': return decision === 'overwrite' ? 'take kit' : 'keep local';
    case 'removed': return decision === 'keep' ? 'kept yours' : 'removed';
    case 'modified':
      if (file.local === 'edited') {
        if (file.merge === 'conflicts') return unresolvedFiles({files: [file]}, choices).length ? 'conflict' : 'resolved';
        if (decision === 'kit') return 'replaces';
        if (decision === 'mine') return 'kept yours';
        return 'merges';
      }
      if (file.local === 'missing') return 'deleted here';
      return 'changed';
    default: return '';
  }
}

/** `+N worker(s) · +N function(s) · ~N model(s)`, zero parts left out. */
export function permissionTally(capabilities) {
  const c = capabilities || {};
  const parts = [];
  const w = (c.workers_added || []).length;
  const f = (c.functions_added || []).length;
  const m = (c.models_changed || []).length;
  if (w) parts.push(`+${plural(w, 'worker')}`);
  if (f) parts.push(`+${plural(f, 'function')}`);
  if (m) parts.push(`~${plural(m, 'model')}`);
  return parts.join(' · ');
}

/** The update review's primary button: label, disabled and tooltip. */
export function updatePrimary(plan, choices) {
  const unresolved = unresolvedFiles(plan, choices);
  if (!unresolved.length) return {label: `Update to ${plan.to}`, disabled: false, title: ''};
  return {
    label: `Update · ${plural(unresolved.length, 'conflict')} pending`,
    disabled: true,
    title: `Resolve: ${unresolved.map((f) => f.path).join(', ')}`,
  };
}

/** `Remove <kit>[ · N file(s)][ · M worker(s)]` (§4.12). */
export function removalPrimaryLabel(plan, choices, removeWorkers) {
  const files = ((plan && plan.files) || []).filter((f) => effectiveDecision(f, choices) === 'remove').length;
  const workers = (removeWorkers || []).length;
  let label = `Remove ${plan.kit}`;
  if (files) label += ` · ${plural(files, 'file')}`;
  if (workers) label += ` · ${plural(workers, 'worker')}`;
  return label;
}

// ------------------------------------------------------------------------ apply (§4.13)

/** The apply's `decisions`: merged text always; other choices only when they differ from the default. */
export function decisionsPayload(plan, choices) {
  const out = {};
  for (const file of (plan && plan.files) || []) {
    const choice = choices ? choices[file.path] : undefined;
    if (choice == null) continue;
    if (typeof choice === 'object') {
      if (choice.choice === 'merged' && typeof choice.content === 'string') {
        out[file.path] = {choice: 'merged', content: choice.content};
        continue;
      }
      if (choice.choice != null && choice.choice !== file.default) out[file.path] = choice.choice;
      continue;
    }
    if (choice !== file.default) out[file.path] = choice;
  }
  return out;
}

/** `Workers[ (n)]`, `Files (n)`, `kits.lock`, all pending. */
export function initialSteps(plan) {
  const n = ((plan && plan.workers) || []).filter((w) => ['add', 'update', 'redeclare'].includes(w.action)).length;
  return [
    {id: 'workers', label: n ? `Workers (${n})` : 'Workers', state: 'pending'},
    {id: 'files', label: `Files (${((plan && plan.files) || []).length})`, state: 'pending'},
    {id: 'lock', label: 'kits.lock', state: 'pending'},
  ];
}

const STEP_STATES = ['pending', 'running', 'done', 'failed', 'skipped'];

/** The steps of a `progress` event of this plan; null for other plans and other ops. */
export function stepsFromEvent(event, planId) {
  if (!event || typeof event !== 'object' || event.op !== 'progress' || event.plan_id !== planId) return null;
  if (!Array.isArray(event.steps)) return null;
  return event.steps.filter((s) => s && typeof s === 'object').map((s) => ({
    id: String(s.id ?? ''), label: String(s.label ?? s.id ?? ''),
    state: STEP_STATES.includes(s.state) ? s.state : 'pending',
    ...(s.detail ? {detail: String(s.detail)} : {}),
  }));
}

/**
 * The steps of a failed apply as its failed view shows them: a failed step's detail that repeats
 * the worker's error text (a D-code line) is dropped, because the view says the error once, in
 * words, with the raw text under Details.
 */
export function failedSteps(steps, error) {
  const raw = cleanError(error);
  return (steps || []).map((step) => {
    if (step.state !== 'failed' || !step.detail) return step;
    const detail = cleanError(step.detail);
    if (!errorCode(detail) && !(raw && (raw.includes(detail) || detail.includes(raw)))) return step;
    const {detail: _dropped, ...rest} = step;
    return rest;
  });
}

/** done / replan / notice / failed for an apply response or a rejection. */
export function applyOutcome(response) {
  if (response instanceof Error) return {kind: 'failed', error: cleanError(response)};
  if (!response || typeof response !== 'object') return {kind: 'failed', error: 'The apply returned nothing.'};
  if (response.error) return {kind: 'failed', error: cleanError(response.error)};
  if (response.status === 'applied' && response.report) return {kind: 'done', report: response.report, message: response.message || ''};
  if (response.plan && (response.status === 'replanned' || response.status === 'planned')) return {kind: 'replan', plan: response.plan, message: response.message || ''};
  if (response.status === 'up_to_date') return {kind: 'notice', message: response.message || ''};
  return {kind: 'failed', error: response.message || `unexpected apply status ${response.status}`};
}

// ------------------------------------------------------------------------ cards (§4.15)

const CLAIMED = new Set([
  ...['list', 'get', 'index', 'download', 'download_from_registry', 'download_from_repo', 'update', 'create'].map((x) => `directory::skills::${x}`),
  ...['list', 'get', 'update', 'create'].map((x) => `directory::system-prompts::${x}`),
  ...['list', 'get', 'update', 'create', 'functions::add', 'functions::remove'].map((x) => `directory::agents::${x}`),
  'directory::registry::workers::list', 'directory::registry::workers::info',
  'directory::download-kit', 'directory::kits::apply', 'directory::kits::plan-update',
  'directory::kits::remove', 'directory::kits::check-updates', 'directory::kits::list',
]);

/** True for the function ids the directory card renders (§4.15). */
export function claimsFunction(functionId) {
  return CLAIMED.has(functionId);
}

/** Title of a plan: `Install <kit> <to>`, `Update <kit> <from> → <to>`, `Remove <kit> <from>`. */
export function planTitle(plan) {
  if (!plan) return '';
  if (plan.kind === 'update') return `Update ${plan.kit} ${plan.from} → ${plan.to}`;
  if (plan.kind === 'remove') return `Remove ${plan.kit} ${plan.from}`;
  return `Install ${plan.kit} ${plan.to}`;
}

const COLLISION_CODES = new Set(['builtin_override', 'file_overwrite_local']);

/** The chat card's summary of a plan, with the request's decisions when known. */
export function planSummary(plan, decisions) {
  const counts = plan.counts || {};
  const replaced = (plan.files || []).filter((f) => f.collision).map((f) => {
    const given = decisions && decisions[f.path] != null ? decisions[f.path] : null;
    const decision = given != null ? (typeof given === 'object' ? given.choice : given) : f.default;
    return {path: f.path, kept: decision === 'keep'};
  });
  const conflicts = (plan.files || []).filter((f) => f.merge === 'conflicts').map((f) => f.path);
  const badges = [];
  if (plan.major) badges.push('major');
  if ((plan.blocking || []).length) badges.push('blocked');
  if ((plan.warnings || []).length) badges.push(plural(plan.warnings.length, 'warning'));
  return {
    title: planTitle(plan),
    counts: [plural(counts.agents || 0, 'profile'), plural(counts.skills || 0, 'skill'),
      plural(counts.workers || 0, 'worker'), plural(counts.functions || 0, 'function')].join(' · '),
    badges,
    blocking: (plan.blocking || []).map((b) => b.message),
    replaced,
    conflicts,
    permissions: permissionTally(plan.capabilities),
    also: (plan.warnings || []).filter((w) => !String(w.code).startsWith('agent_') && !COLLISION_CODES.has(w.code) && w.code !== 'merge_conflict')
      .map((w) => w.message).slice(0, 4),
  };
}

/** The search card model (§4.15), or null for a malformed output. */
export function parseSearchResult(output) {
  if (!output || typeof output !== 'object' || Array.isArray(output) || !Array.isArray(output.workers)) return null;
  const asList = (value) => (Array.isArray(value) ? value : []);
  const workers = output.workers.filter((w) => w && typeof w === 'object').map((w) => ({
    namespace: String(w.namespace ?? ''),
    functions: asList(w.functions).filter((f) => f && typeof f.function_id === 'string')
      .map((f) => ({function_id: f.function_id, description: String(f.description ?? '')})),
  }));
  const installable = asList(output.installable).filter((w) => w && typeof w === 'object').map((w) => ({
    name: String(w.name ?? ''), version: String(w.version ?? ''), description: String(w.description ?? ''),
    functions: asList(w.functions).filter((f) => f && typeof f.function_id === 'string'),
    install: `${(w.install && w.install.function) || 'compose::add'} ${JSON.stringify((w.install && w.install.payload) || {worker: w.name})}`,
  }));
  const functions = workers.reduce((n, w) => n + w.functions.length, 0);
  const latency = Number(output.latency_ms);
  return {
    header: `${plural(workers.length, 'worker')} · ${plural(functions, 'function')} · ${installable.length} installable`,
    mode: typeof output.search_mode === 'string' ? output.search_mode : '',
    latency: Number.isFinite(latency) ? `${Math.round(latency)} ms` : '',
    workers, installable,
    skills: asList(output.skills), triggers: asList(output.triggers),
    guidance: typeof output.guidance === 'string' ? output.guidance : '',
  };
}

// ---------------------------------------------------------------- configuration (§4.16)

/**
 * The next configuration value after one field edit. `input` is `{kind: 'text' | 'number' |
 * 'switch' | 'choice', raw}`. Empty text / number removes the key; a number must be whole, else
 * `{error: 'Enter a whole number.'}`; retired `function_search_jev_*` keys are dropped; other
 * unknown keys are kept.
 */
export function configPatch(value, key, input) {
  const next = {};
  for (const [k, v] of Object.entries(value && typeof value === 'object' ? value : {})) {
    if (!k.startsWith('function_search_jev_')) next[k] = v;
  }
  const {kind, raw} = input || {};
  if (kind === 'switch') { next[key] = Boolean(raw); return {value: next}; }
  const text = raw == null ? '' : String(raw).trim();
  if (text === '') { delete next[key]; return {value: next}; }
  if (kind === 'number') {
    if (!/^-?\d+$/.test(text)) return {error: 'Enter a whole number.'};
    next[key] = Number.parseInt(text, 10);
    return {value: next};
  }
  next[key] = kind === 'choice' ? text : String(raw);
  return {value: next};
}

/** The editor / preview split ratio kept between 0.2 and 0.8 (a bad value gives the default 0.5). */
export function clampRatio(ratio) {
  const n = typeof ratio === 'number' ? ratio : Number.NaN;
  if (!Number.isFinite(n)) return 0.5;
  return Math.min(0.8, Math.max(0.2, Math.round(n * 100) / 100));
}

/** The split ratio for a pointer at `x` over a container starting at `left` and `width` wide. */
export function ratioFromPointer(x, left, width) {
  if (!(width > 0)) return 0.5;
  return clampRatio((x - left) / width);
}

/** Handler ids of §2.7: `iii::iii-directory-ui::<topic>::<subscriber>-<n>`, sanitised. */
export function subscriberId(topic, subscriber, n) {
  return `iii::iii-directory-ui::${topic}::${`${subscriber}-${n}`.toLowerCase().replace(/[^a-z0-9_-]/g, '-')}`;
}

// ------------------------------------------------------------ stale saves (issue 21 §1)

const SHA256_K = [
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
function internLines(a, b) {
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
function splitPoint(a, a0, a1, b, b0, b1) {
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
function partnersOf(a, b) {
  const partners = new Array(a.length).fill(-1);
  for (const [i, j] of matchingPairs(a, b)) partners[i] = j;
  return partners;
}

const sameLines = (x, y) => x.length === y.length && x.every((line, i) => line === y[i]);

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

/**
 * Whether a rejection means the worker could not be asked: `'unreachable'` (the engine knows no
 * such function — the worker is gone — or the request never left the tab), `'timeout'` (no
 * answer in time), else null (the worker answered with an error of its own).
 */
export function transportProblem(error) {
  const raw = error == null ? '' : String(typeof error === 'string' ? error : (error.message ?? error));
  if (/^D\d{3}\b/.test(cleanError(raw))) return null;
  if (/\(function_not_found\)|function_not_found|Function '?[\w:.-]+'? not found|Failed to fetch|NetworkError|not connected/i.test(raw)) return 'unreachable';
  if (/timed out|timeout|deadline exceeded/i.test(raw)) return 'timeout';
  return null;
}

/** Seconds between probes while the worker is unreachable: quick at first, then every 30 s. */
export const RETRY_DELAYS_MS = [2000, 4000, 8000, 15000, 30000];

/**
 * The worker's reachability as the page sees it. `markDown()` (a call failed as unreachable)
 * starts probing with `probe()` after RETRY_DELAYS_MS; any answer — a probe's or any call's
 * (`markUp()`) — ends it. Listeners get `{down, nextAt, attempt}`; `nextAt` is in `now()` ms.
 * The timers and the clock are injected so tests never wait.
 */
export function createReachability(probe, {setTimer = setTimeout, clearTimer = clearTimeout, now = Date.now} = {}) {
  const listeners = new Set();
  let state = {down: false, nextAt: 0, attempt: 0};
  let timer = null;
  const tell = (next) => { state = next; listeners.forEach((l) => l(state)); };
  const schedule = (attempt) => {
    const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
    timer = setTimer(() => { timer = null; retry(); }, delay);
    tell({down: true, nextAt: now() + delay, attempt});
  };
  const markUp = () => {
    if (!state.down) return;
    if (timer != null) clearTimer(timer);
    timer = null;
    tell({down: false, nextAt: 0, attempt: 0});
  };
  const retry = () => {
    if (!state.down) return Promise.resolve();
    if (timer != null) { clearTimer(timer); timer = null; }
    const attempt = state.attempt + 1;
    return Promise.resolve().then(probe).then(markUp, (error) => {
      if (!transportProblem(error)) markUp(); // it answered, with an error of its own
      else if (state.down && timer == null) schedule(attempt);
    });
  };
  const markDown = () => { if (!state.down) schedule(0); };
  const subscribe = (listener) => { listeners.add(listener); return () => listeners.delete(listener); };
  return {markDown, markUp, retry, subscribe, get state() { return state; }};
}

/** True when a rejection is the worker's stale-write refusal (D114 / D414 "changed since you read it"). */
export function isStaleWrite(error) {
  return /^D[14]14 invalid_input: .* changed since you read it/.test(cleanError(error));
}

// -------------------------------------------------------------- speaking to people (§7)

/** The D-code at the start of a rejection text, or ''. */
export function errorCode(error) {
  const match = /^(D\d{3})\b/.exec(cleanError(error));
  return match ? match[1] : '';
}

/**
 * One short sentence and an optional action for a rejection the page can meet. `context` is
 * `{op, noun}`: op one of `create`, `update`, `delete`, `get`, `install`; noun `skill` or
 * `agent profile`. Actions: `open` (open the existing entry), `reload`, `copy` (copy a read-only
 * skill into the skills folder), `retry`. Unknown codes keep a generic sentence; the raw text is
 * always shown under Details by the caller.
 */
export function humanError(error, context) {
  const {op = '', noun = 'entry'} = context || {};
  const code = errorCode(error);
  const text = cleanError(error);
  const a = /^[aeiou]/.test(noun) ? 'An' : 'A';
  if (isStaleWrite(error)) return {code, sentence: `This ${noun} changed on disk since you opened it.`, action: 'compare', actionLabel: 'Compare'};
  const transport = transportProblem(error);
  if (transport === 'unreachable') return {code, sentence: 'The iii-directory worker is not reachable; nothing was changed.', action: 'retry', actionLabel: 'Retry'};
  if (transport === 'timeout') return {code, sentence: 'The worker did not answer in time; nothing is known to have changed.', action: 'retry', actionLabel: 'Retry'};
  switch (code) {
    case 'D110': case 'D410':
      return {code, sentence: `This ${noun} no longer exists on disk.`, action: 'reload', actionLabel: 'Reload the list'};
    case 'D112':
      return {code, sentence: 'That is a function id (service::name), not a skill id.', action: null};
    case 'D113':
      return {code, sentence: /too large/.test(text) ? 'This skill is larger than the 256 KB limit.' : 'A skill needs some text in its body.', action: null};
    case 'D114': case 'D414':
      if (/bundled with the worker/.test(text)) return {code, sentence: 'Built-in profiles have no file to delete.', action: null};
      if (/skipped by the scanner/.test(text)) return {code, sentence: `A file the scanner skips already sits at this ${noun}'s path; fix or remove it on disk.`, action: null};
      return {code, sentence: `${a} ${noun} with this id already exists.`, action: op === 'create' ? 'open' : null, actionLabel: 'Open it'};
    case 'D115':
      return {code, sentence: 'This id is reserved or would be hidden; choose another id.', action: null};
    case 'D116':
      return {code, sentence: 'This skill is installed by another tool and is read-only here.', action: 'copy', actionLabel: 'Copy to skills folder'};
    case 'D413':
      return {code, sentence: 'The profile needs a name and valid fields.', action: null};
    case 'D416':
      return {code, sentence: 'Each preloaded function must be an engine function id like coder::tree.', action: null};
    case 'D510':
      return {code, sentence: op === 'install' ? 'There is no kit with that name in the registry.' : 'This kit is not installed.', action: null};
    case 'D511':
      return {code, sentence: 'Write the kit as author/kit or author/kit@1.2.0.', action: null};
    case 'D512':
      return {code, sentence: 'This plan is no longer available.', action: null};
    case 'D514':
      return {code, sentence: 'The plan is blocked; start the Compose daemon and try again.', action: 'retry', actionLabel: 'Try again'};
    case 'D515':
      return {code, sentence: 'Compose could not finish the change.', action: 'retry', actionLabel: 'Try again'};
    case 'D320': case 'D520':
      return {code, sentence: 'The registry could not be reached.', action: 'retry', actionLabel: 'Try again'};
    default:
      return {code, sentence: op === 'update' || op === 'create' ? 'The save did not go through.' : 'That did not work.', action: null};
  }
}

/**
 * Whether a function stays out of the agent form's functions picker until the user asks: the
 * engine's own functions (`engine::`, `configuration::`), console and browser plumbing (`iii::`,
 * `console::`) and functions registered as internal — tools an agent profile almost never wants.
 */
export function isInternalFunction(row) {
  const id = String((row && row.id) || '');
  return /^(engine|configuration|iii|console)::/.test(id) || !!(row && row.internal);
}

/** The first sentence (or line) of a description, at most `max` characters: the picker's one-line summary. */
export function oneLine(text, max = 90) {
  const first = String(text || '').trim().split(/\n/)[0];
  const sentence = (/^(.+?[.!?])(\s|$)/.exec(first) || [null, first])[1];
  return sentence.length > max ? `${sentence.slice(0, max - 1).trimEnd()}…` : sentence;
}

/** Agent profiles bundled with this worker version (the page ships in the same package). */
export const BUILTIN_AGENT_IDS = ['default', 'iii', 'iii-minimal'];

/** Install reviews preselect keeping a profile or file the user made (local or global) over the kit's. */
export function initialChoices(plan) {
  const out = {};
  if (!plan || plan.kind !== 'install') return out;
  for (const file of plan.files || []) {
    const owner = file.collision && file.collision.owner;
    if ((owner === 'local' || owner === 'global') && file.default === 'overwrite' && (file.options || ['keep']).includes('keep')) out[file.path] = 'keep';
  }
  return out;
}

// ------------------------------------------------------------- markdown preview (§9)

/** Link targets the preview keeps clickable: http(s), mailto, in-page anchors and relative paths. */
export function safeHref(url) {
  const href = String(url || '').trim();
  if (/^(https?:|mailto:)/i.test(href)) return href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return null;
  return href || null;
}

/**
 * Inline markdown to nodes: `code`, **strong** / __strong__, *em* / _em_, [text](url). Everything
 * else stays text — HTML included, which the renderer prints as text and never parses.
 */
export function markdownInline(text) {
  const out = [];
  const source = String(text ?? '');
  const pattern = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([^*]+?)\*\*|__([^_]+?)__|\*([^*\s][^*]*?)\*|(?<![A-Za-z0-9])_([^_\s][^_]*?)_(?![A-Za-z0-9])|\[([^\]]+)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
  let last = 0;
  let match;
  while ((match = pattern.exec(source)) !== null) {
    if (match.index > last) out.push({t: 'text', text: source.slice(last, match.index)});
    if (match[1]) out.push({t: 'code', text: match[2].replace(/^ (.*) $/, '$1')});
    else if (match[3] || match[4]) out.push({t: 'strong', c: markdownInline(match[3] || match[4])});
    else if (match[5] || match[6]) out.push({t: 'em', c: markdownInline(match[5] || match[6])});
    else {
      const href = safeHref(match[8]);
      out.push(href ? {t: 'a', href, c: markdownInline(match[7])} : {t: 'text', text: match[7]});
    }
    last = pattern.lastIndex;
  }
  if (last < source.length) out.push({t: 'text', text: source.slice(last)});
  return out;
}

const tableCells = (line) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((cell) => cell.trim());
const isTableRule = (line) => /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/.test(line) && line.includes('-');

/**
 * Block markdown to a node tree: ATX headings, fenced code, block quotes, bullet and numbered
 * lists (one level; indented lines continue an item), pipe tables with a rule line, thematic
 * breaks and paragraphs. The tree holds text only; the page turns it into elements.
 */
export function markdownBlocks(text) {
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  const blocks = [];
  let i = 0;
  const isBlank = (line) => line.trim() === '';
  const startsBlock = (line, next) => /^\s{0,3}(#{1,6}\s|```|~~~|>|[-*+]\s|\d{1,9}[.)]\s)/.test(line) || /^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)
    || (line.includes('|') && next !== undefined && isTableRule(next));
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) { i += 1; continue; }
    const fence = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/.exec(line);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) { body.push(lines[i]); i += 1; }
      i += 1;
      blocks.push({t: 'pre', lang: fence[2] || '', text: body.join('\n')});
      continue;
    }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) { blocks.push({t: `h${heading[1].length}`, c: markdownInline(heading[2])}); i += 1; continue; }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { blocks.push({t: 'hr'}); i += 1; continue; }
    if (/^\s{0,3}>/.test(line)) {
      const quoted = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i])) { quoted.push(lines[i].replace(/^\s{0,3}>\s?/, '')); i += 1; }
      blocks.push({t: 'blockquote', c: markdownBlocks(quoted.join('\n'))});
      continue;
    }
    const item = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      const ordered = /\d/.test(item[1]);
      const items = [];
      while (i < lines.length) {
        const m = /^\s{0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(lines[i]);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        const parts = [m[2]];
        i += 1;
        while (i < lines.length && !isBlank(lines[i]) && /^\s{2,}\S/.test(lines[i]) && !/^\s{0,3}([-*+]|\d{1,9}[.)])\s/.test(lines[i])) { parts.push(lines[i].trim()); i += 1; }
        items.push({t: 'li', c: markdownInline(parts.join(' '))});
        if (i < lines.length && isBlank(lines[i]) && i + 1 < lines.length && /^\s{0,3}([-*+]|\d{1,9}[.)])\s/.test(lines[i + 1])) i += 1;
      }
      const start = ordered ? Number.parseInt(item[1], 10) : 1;
      blocks.push(ordered ? {t: 'ol', start, c: items} : {t: 'ul', c: items});
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && isTableRule(lines[i + 1])) {
      const head = tableCells(line);
      const align = tableCells(lines[i + 1]).map((cell) => (cell.endsWith(':') ? (cell.startsWith(':') ? 'center' : 'right') : (cell.startsWith(':') ? 'left' : null)));
      i += 2;
      const rows = [];
      while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) { rows.push(tableCells(lines[i])); i += 1; }
      const cell = (tag, texts, k) => ({t: tag, align: align[k] || null, c: markdownInline(texts[k] ?? '')});
      blocks.push({t: 'table', c: [
        {t: 'thead', c: [{t: 'tr', c: head.map((_, k) => cell('th', head, k))}]},
        {t: 'tbody', c: rows.map((row) => ({t: 'tr', c: head.map((_, k) => cell('td', row, k))}))},
      ]});
      continue;
    }
    const para = [line.trim()];
    i += 1;
    while (i < lines.length && !isBlank(lines[i]) && !startsBlock(lines[i], lines[i + 1])) { para.push(lines[i].trim()); i += 1; }
    blocks.push({t: 'p', c: markdownInline(para.join('\n'))});
  }
  return blocks;
}

const MD_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'li', 'pre', 'blockquote', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
  'hr', 'a', 'strong', 'em', 'code']);

/** The node tree as React elements: a fixed set of tags, text children only, safe hrefs. */
export function markdownElements(h, nodes) {
  return (nodes || []).map((node, key) => {
    if (node.t === 'text') return node.text;
    if (!MD_TAGS.has(node.t)) return null;
    if (node.t === 'hr') return h('hr', {key});
    if (node.t === 'code') return h('code', {key}, node.text);
    if (node.t === 'pre') return h('pre', {key, 'data-lang': node.lang || undefined}, h('code', null, node.text));
    if (node.t === 'a') return h('a', {key, href: node.href, target: '_blank', rel: 'noopener noreferrer'}, markdownElements(h, node.c));
    const props = {key};
    if (node.t === 'ol' && node.start !== 1) props.start = node.start;
    if ((node.t === 'th' || node.t === 'td') && node.align) props.style = {textAlign: node.align};
    return h(node.t, props, markdownElements(h, node.c));
  });
}

// ------------------------------------------------------------------ origins (§6)

/** The agent-skills roots the worker treats as read-only, as configured (defaults when unknown). */
export function readOnlyRoots(config) {
  const c = config && typeof config === 'object' ? config : {};
  return [c.agents_skills_folder || '.agents/skills', c.global_agents_skills_folder || '~/.agents/skills'].filter((x) => typeof x === 'string' && x);
}

/** Whether an absolute file path lies under one of `roots` (absolute roots by prefix; relative and `~/` ones by segment match). */
export function isReadOnlyPath(path, roots) {
  const p = String(path || '').replace(/\\/g, '/');
  if (!p) return false;
  return (roots || []).some((root) => {
    const r = String(root).replace(/\\/g, '/').replace(/\/+$/, '');
    if (r.startsWith('/')) return p.startsWith(`${r}/`);
    const tail = r.replace(/^~\//, '').replace(/^\.\//, '');
    return tail !== '' && p.includes(`/${tail}/`);
  });
}

/** The installed kit (`author/kit`) whose folder holds a skill id, or null. */
export function kitOfSkill(id, owners) {
  return owners && typeof owners.get === 'function' ? owners.get(String(id || '')) || null : null;
}

/**
 * Skill id → kit, from each installed kit's lock records (`directory::kits::get` `file_list`,
 * the files the kit installed). Ownership never comes from the id: a skill the user created under
 * `acme/team/…` is theirs.
 */
export function skillOwners(kitDetails) {
  const owners = new Map();
  for (const detail of kitDetails || []) {
    for (const file of (detail && detail.file_list) || []) {
      if (file && file.kind === 'skill' && typeof file.id === 'string' && typeof detail.kit === 'string') owners.set(file.id, detail.kit);
    }
  }
  return owners;
}

/**
 * A kit's one state for its card, from its list row and the pending plans: a pending update plan
 * first (its review is what is waiting), then an available version, then "up to date" once
 * updates were checked. `plan` is the pending update plan, if any.
 */
export function kitStatus(kit, pending) {
  const plan = (pending || []).find((p) => p.kit === kit.kit && p.kind === 'update') || null;
  if (plan) return {text: `Update ${plan.from} → ${plan.to} waiting for review`, update: true, plan};
  if (kit.update && kit.update.available) return {text: `↑ ${kit.update.available} available${kit.update.major ? ' · major' : ''}`, update: true, plan};
  return {text: kit.update ? 'up to date' : null, update: false, plan};
}

/** Origin chips of a list row: read-only, from kit X (`kits`: skillOwners), from worker X, built-in, local override, global. */
export function originBadges(collection, row, {kits, builtinIds, readOnlyIds} = {}) {
  if (collection === 'skills') {
    const out = [];
    // `origin` comes with list rows from workers that know `include_origin`; older ones are learned on open.
    if (row.origin === 'read_only' || (readOnlyIds && readOnlyIds.has(row.id))) out.push({text: 'read-only', tone: 'neutral'});
    const kit = kitOfSkill(row.id, kits);
    if (kit) out.push({text: `from kit ${kit}`, tone: 'accent'});
    return out;
  }
  const source = row.source || {kind: row.builtin ? 'builtin' : 'local'};
  if (row.builtin || source.kind === 'builtin') return [{text: 'built-in', tone: 'neutral'}];
  const out = [];
  if (source.kind === 'kit') out.push({text: `from kit ${source.kit ?? ''}`, tone: 'accent'});
  if (source.kind === 'worker') out.push({text: `from worker ${source.worker ?? ''}`, tone: 'accent'});
  if (builtinIds && builtinIds.has(row.id)) out.push({text: 'local override', tone: 'warn'});
  return out;
}

// ------------------------------------------------------------- long lists (§11, §13)

/** The lowercase text a filter matches in a row: id, title, description, plus any `extra`. */
export function rowHaystack(adapter, row, extra) {
  return [adapter.key(row), adapter.title(row), row.description, extra].filter((t) => typeof t === 'string').join('\n').toLowerCase();
}

/** The namespace of a skill id: its first segment. */
export function namespaceOf(id) {
  const text = String(id || '');
  const slash = text.indexOf('/');
  return slash < 0 ? text : text.slice(0, slash);
}

/** The lowercase words of a filter query. */
export function filterWords(query) {
  return String(query || '').trim().toLowerCase().split(/\s+/).filter(Boolean);
}

/**
 * The list's items: rows where every word of `query` is in the haystack or, per `bodyHits`
 * (word → Set of keys whose body holds it, from the worker's body search), in the body —
 * those rows carry `viaBody: true`. Sorted by id when `group`, with a
 * `{type: 'group', name, count}` heading before each namespace once there is more than one.
 * `entries` is `[{row, key, hay}]`.
 */
export function listItems(entries, query, group, bodyHits) {
  const words = filterWords(query);
  const inBody = (e, w) => !!bodyHits && !!bodyHits.get(w) && bodyHits.get(w).has(e.key);
  const hits = [];
  for (const e of entries) {
    if (words.every((w) => e.hay.includes(w))) hits.push(e);
    else if (words.every((w) => e.hay.includes(w) || inBody(e, w))) hits.push({...e, viaBody: true});
  }
  if (!group) return hits.map((e) => ({type: 'row', ...e}));
  hits.sort((x, y) => (x.key < y.key ? -1 : (x.key > y.key ? 1 : 0)));
  const counts = new Map();
  for (const e of hits) counts.set(namespaceOf(e.key), (counts.get(namespaceOf(e.key)) || 0) + 1);
  if (counts.size < 2) return hits.map((e) => ({type: 'row', ...e}));
  const out = [];
  let current = null;
  for (const e of hits) {
    const ns = namespaceOf(e.key);
    if (ns !== current) { out.push({type: 'group', key: `group:${ns}`, name: ns, count: counts.get(ns)}); current = ns; }
    out.push({type: 'row', ...e});
  }
  return out;
}

/** The slice `[start, end)` of items whose boxes meet the viewport `[top, top + height)`, given cumulative `offsets`. */
export function windowRange(offsets, top, height, overscan = 6) {
  const n = offsets.length - 1;
  let lo = 0;
  let hi = n;
  while (lo < hi) { const mid = (lo + hi) >> 1; if (offsets[mid + 1] <= top) lo = mid + 1; else hi = mid; }
  let end = lo;
  while (end < n && offsets[end] < top + height) end += 1;
  return [Math.max(0, lo - overscan), Math.min(n, end + overscan)];
}

export const RULES = {
  COLLECTIONS, plural, cleanError, formatAgo, formatSize, routeFromContext, narrowPanes, draftAction,
  originLabel, parseFrontmatter, setFrontmatterFields, functionsEdit, paletteRows, isKitReference,
  attentionBadge, lineDiff, hasConflictMarkers, effectiveDecision, unresolvedFiles, ownerPhrase,
  workerLine, decisionLabel, groupFunctions, skillGroups, collisionHeadline, installPrimaryLabel,
  updateGroups, changeCount, fileStateWord, permissionTally, updatePrimary, removalPrimaryLabel,
  decisionsPayload, initialSteps, stepsFromEvent, applyOutcome, failedSteps, claimsFunction, planSummary,
  parseSearchResult, configPatch, planTitle, subscriberId, clampRatio, ratioFromPointer, withCode,
  sha256Hex, merge3, isStaleWrite, errorCode, humanError, initialChoices, safeHref, markdownInline, markdownBlocks,
  matchingPairs, blockScalar, restoreDraft, afterSave, conflictBlocks, takeSide, blocksSave, transportProblem,
  rowHaystack, namespaceOf, filterWords, listItems, windowRange, readOnlyRoots, isReadOnlyPath, kitOfSkill, originBadges, skillOwners, kitStatus,
  isInternalFunction, oneLine, firstHeading, setFirstHeading, neighbourKey,
};

// ============================================================================ shared UI (§3.4)

const LS_PREFIX = 'iii-directory:';
let subscriberCounter = 0;

/** `area` is localStorage (drafts, settings) or sessionStorage (this tab's open document). */
function storageGet(key, fallback, area = globalThis.localStorage) {
  try {
    const raw = area ? area.getItem(LS_PREFIX + key) : null;
    return raw == null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

function storageSet(key, value, area = globalThis.localStorage) {
  try {
    if (!area) return;
    if (value == null) area.removeItem(LS_PREFIX + key);
    else area.setItem(LS_PREFIX + key, JSON.stringify(value));
  } catch {
    // storage full or disabled: drafts are a convenience
  }
}

const ICON_PATHS = {
  file: 'M6 2h9l5 5v15H6z M14 2v6h6',
  puzzle: 'M10 3h4v3a2 2 0 1 0 4 0V3h3v7h-3a2 2 0 1 0 0 4h3v7h-7v-3a2 2 0 1 0-4 0v3H3v-7h3a2 2 0 1 0 0-4H3V3z',
  book: 'M4 4h7a3 3 0 0 1 3 3v13a2 2 0 0 0-2-2H4z M20 4h-5a3 3 0 0 0-3 3',
  person: 'M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8z M4 21a8 8 0 0 1 16 0',
  check: 'M4 12l5 5L20 6',
  close: 'M6 6l12 12 M18 6L6 18',
  back: 'M15 5l-7 7 7 7',
  warn: 'M12 3l10 18H2z M12 10v5 M12 18v.5',
  plus: 'M12 5v14 M5 12h14',
  trash: 'M4 7h16 M9 7V4h6v3 M6 7l1 13h10l1-13',
};

/** Build the UI toolkit for one React instance and host: adapters with plain fallbacks and the page's own elements. */
export function createUi(React, host) {
  const h = React.createElement;
  const {useState, useEffect, useRef, useCallback} = React;

  class Boundary extends React.Component {
    constructor(props) { super(props); this.state = {failed: false}; }
    static getDerivedStateFromError() { return {failed: true}; }
    componentDidCatch(error) { console.warn('[iii-directory] a console component failed; using the plain element:', error); }
    render() { return this.state.failed ? this.props.fallback : this.props.children; }
  }

  const components = (host && host.components) || {};
  const consoleComponent = (name) => (CONSOLE_COMPONENTS.includes(name) && typeof components[name] === 'function' ? components[name]
    : (CONSOLE_COMPONENTS.includes(name) && components[name] && typeof components[name] === 'object' ? components[name] : null));
  const adapt = (name, props, fallback) => {
    const Comp = consoleComponent(name);
    return Comp ? h(Boundary, {fallback}, h(Comp, props)) : fallback;
  };

  function Icon({name, size = 16, label}) {
    return h('svg', {className: 'iiid-icon', width: size, height: size, viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor',
      strokeWidth: 2, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': label ? undefined : 'true',
      role: label ? 'img' : undefined, 'aria-label': label},
    h('path', {d: ICON_PATHS[name] || ICON_PATHS.file}));
  }

  function Button({variant = 'secondary', onClick, disabled, title, label, children, className, type}) {
    const fallback = h('button', {type: type || 'button', className: `iiid-btn iiid-btn--${variant}${className ? ` ${className}` : ''}`,
      onClick, disabled, title: title || undefined, 'aria-label': label}, children);
    return adapt('Button', {onClick, disabled, title, 'aria-label': label, variant, children}, fallback);
  }

  function TextInput({value, onChange, placeholder, label, disabled, inputRef, onKeyDown, className, onBlur, maxLength, list, title}) {
    const props = {type: 'text', value: value ?? '', onChange: (e) => onChange && onChange(e.target.value), placeholder, title,
      'aria-label': label, disabled, ref: inputRef, onKeyDown, className: `iiid-input${className ? ` ${className}` : ''}`,
      onBlur, maxLength, list, spellCheck: false};
    if (inputRef || onKeyDown || list) return h('input', props);
    return adapt('Input', {value: value ?? '', onChange: props.onChange, placeholder, 'aria-label': label, disabled}, h('input', props));
  }

  function PlainDialog({open, onClose, title, children, footer, wide}) {
    const ref = useRef(null);
    useEffect(() => {
      if (!open) return undefined;
      const previous = globalThis.document ? globalThis.document.activeElement : null;
      const node = ref.current;
      if (node) {
        const target = node.querySelector('[data-autofocus], button, input, textarea, select') || node;
        target.focus();
      }
      return () => { if (previous && previous.focus) previous.focus(); };
    }, [open]);
    // Escape closes from anywhere; Tab and Shift+Tab cycle inside the dialog.
    const closeRef = useRef(onClose);
    closeRef.current = onClose;
    useEffect(() => {
      if (!open || !globalThis.document) return undefined;
      const onKey = (e) => {
        const node = ref.current;
        if (!node) return;
        if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); if (closeRef.current) closeRef.current(); return; }
        if (e.key !== 'Tab') return;
        const focusable = [...node.querySelectorAll('button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])')]
          .filter((el) => !el.disabled && el.getClientRects().length > 0);
        if (!focusable.length) { e.preventDefault(); node.focus(); return; }
        const first = focusable[0];
        const last = focusable[focusable.length - 1];
        const inside = node.contains(globalThis.document.activeElement);
        if (e.shiftKey && (!inside || globalThis.document.activeElement === first || globalThis.document.activeElement === node)) { e.preventDefault(); last.focus(); }
        else if (!e.shiftKey && (!inside || globalThis.document.activeElement === last)) { e.preventDefault(); first.focus(); }
      };
      globalThis.document.addEventListener('keydown', onKey, true);
      return () => globalThis.document.removeEventListener('keydown', onKey, true);
    }, [open]);
    if (!open) return null;
    return h('div', {className: 'iiid-backdrop', onMouseDown: (e) => { if (e.target === e.currentTarget) onClose && onClose(); }},
      h('div', {className: `iiid-dialog${wide ? ' iiid-dialog--wide' : ''}`, role: 'dialog', 'aria-modal': 'true', 'aria-label': title,
        tabIndex: -1, ref},
      h('div', {className: 'iiid-dialog__head'}, h('h2', {className: 'iiid-dialog__title'}, title),
        h('button', {type: 'button', className: 'iiid-iconbtn', 'aria-label': 'Close', onClick: onClose}, h(Icon, {name: 'close'}))),
      h('div', {className: 'iiid-dialog__body'}, children),
      footer ? h('div', {className: 'iiid-dialog__foot'}, footer) : null));
  }

  function Dialog(props) {
    const fallback = h(PlainDialog, props);
    if (!props.open) return null;
    return adapt('Dialog', {open: props.open, onOpenChange: (o) => { if (!o && props.onClose) props.onClose(); }, title: props.title,
      children: [props.children, props.footer]}, fallback);
  }

  /** The console's markdown component when it has one, else this page's own renderer (no raw HTML). */
  function Markdown({content}) {
    const blocks = React.useMemo(() => markdownBlocks(content || ''), [content]);
    return adapt('MarkdownPreview', {content: content || ''}, h('div', {className: 'iiid-md iiid-md--own'}, markdownElements(h, blocks)));
  }

  function Editor({value, onChange, label, rows = 18, readOnly, onKeyDown}) {
    const fallback = h('textarea', {className: 'iiid-editor', spellCheck: false, value: value ?? '', 'aria-label': label, rows, readOnly,
      onChange: (e) => onChange && onChange(e.target.value), onKeyDown});
    if (onKeyDown || readOnly) return fallback;
    return adapt('CodeEditor', {value: value ?? '', onChange: (text) => onChange && onChange(text), language: 'markdown', 'aria-label': label}, fallback);
  }

  /** A choice group: role radiogroup with role radio options (segmented controls, radio lists). */
  function Choice({label, options, value, onChange, variant = 'segmented', disabled}) {
    const refs = useRef([]);
    const move = (index, delta) => {
      const next = (index + delta + options.length) % options.length;
      onChange(options[next].value);
      const node = refs.current[next];
      if (node) node.focus();
    };
    return h('div', {role: 'radiogroup', 'aria-label': label, className: `iiid-choice iiid-choice--${variant}`},
      options.map((option, index) => h('button', {
        key: option.value, type: 'button', role: 'radio', 'aria-checked': option.value === value ? 'true' : 'false',
        'aria-label': option.ariaLabel, title: option.title, disabled: disabled || option.disabled,
        tabIndex: option.value === value || (value == null && index === 0) ? 0 : -1,
        ref: (node) => { refs.current[index] = node; },
        className: `iiid-choice__opt${option.value === value ? ' is-on' : ''}`,
        onClick: () => onChange(option.value),
        onKeyDown: (e) => {
          if (e.key === 'ArrowRight' || e.key === 'ArrowDown') { e.preventDefault(); move(index, 1); }
          if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') { e.preventDefault(); move(index, -1); }
        },
      }, variant === 'radio' ? h('span', {className: 'iiid-radio-dot', 'aria-hidden': 'true'}) : null, option.content ?? option.label)));
  }

  function Tabs({label, tabs, value, onChange}) {
    return h('div', {role: 'tablist', 'aria-label': label, className: 'iiid-tabs'},
      tabs.map((tab) => h('button', {key: tab.id, type: 'button', role: 'tab', 'aria-selected': tab.id === value ? 'true' : 'false',
        className: `iiid-tab${tab.id === value ? ' is-on' : ''}`, onClick: () => onChange(tab.id)}, tab.label)));
  }

  function Checkbox({label, checked, onChange, disabled, children}) {
    return h('label', {className: `iiid-check${disabled ? ' is-disabled' : ''}`},
      h('input', {type: 'checkbox', checked: !!checked, disabled, 'aria-label': label, onChange: (e) => onChange(e.target.checked)}),
      h('span', null, children ?? label));
  }

  function Chip({tone = 'neutral', children, title}) {
    return h('span', {className: `iiid-chip iiid-chip--${tone}`, title}, children);
  }

  function Alert({tone = 'alert', title, children, role}) {
    return h('div', {className: `iiid-banner iiid-banner--${tone}`, role: role || (tone === 'alert' ? 'alert' : 'status')},
      title ? h('strong', {className: 'iiid-banner__title'}, title) : null, children);
  }

  function Skeleton({rows = 4}) {
    return h('div', {className: 'iiid-skeleton', 'aria-busy': 'true', 'aria-label': 'Loading'},
      Array.from({length: rows}, (_, i) => h('div', {key: i, className: 'iiid-skeleton__row'})));
  }

  const STEP_GLYPH = {pending: '○', running: '◐', done: '✓', failed: '✕', skipped: '–'};

  function StepList({steps}) {
    return h('ol', {className: 'iiid-steps'}, (steps || []).map((step, i) => h('li', {key: step.id || i, className: `iiid-step is-${step.state}`},
      h('span', {className: 'iiid-step__icon', 'aria-hidden': 'true'}, STEP_GLYPH[step.state] || '○'),
      h('span', {className: 'iiid-step__label'}, step.label),
      h('span', {className: 'iiid-step__state'}, step.state),
      step.detail ? h('div', {className: 'iiid-step__detail'}, step.detail) : null)));
  }

  function CopyButton({text}) {
    const [copied, setCopied] = useState(false);
    useEffect(() => {
      if (!copied) return undefined;
      const t = setTimeout(() => setCopied(false), 1500);
      return () => clearTimeout(t);
    }, [copied]);
    const copy = () => {
      try {
        const p = globalThis.navigator && globalThis.navigator.clipboard && globalThis.navigator.clipboard.writeText(text);
        if (p && p.catch) p.catch(() => {});
      } catch {
        // ignored: copying is best effort
      }
      setCopied(true);
    };
    return h(Button, {onClick: copy, variant: 'ghost'}, copied ? 'Copied' : 'Copy');
  }

  function CodeLine({text}) {
    return h('div', {className: 'iiid-codeline'}, h('code', null, text), h(CopyButton, {text}));
  }

  /** Split (two numbered columns) or Unified (+/− markers); long unchanged runs collapse. */
  function DiffView({left, right, leftCaption, rightCaption, narrow, editor}) {
    const [layout, setLayout] = useState(narrow ? 'unified' : 'split');
    const [expanded, setExpanded] = useState({});
    const rows = React.useMemo(() => lineDiff(left ?? '', right ?? ''), [left, right]);
    const blocks = [];
    let i = 0;
    while (i < rows.length) {
      if (rows[i].kind === 'same') {
        let j = i;
        while (j < rows.length && rows[j].kind === 'same') j += 1;
        const run = rows.slice(i, j);
        if (run.length > 6 && !expanded[i]) {
          const head = i === 0 ? [] : run.slice(0, 3);
          const tail = j === rows.length ? [] : run.slice(-3);
          const hidden = run.length - head.length - tail.length;
          if (hidden > 0) {
            blocks.push(...head);
            blocks.push({kind: 'fold', at: i, hidden});
            blocks.push(...tail);
          } else blocks.push(...run);
        } else blocks.push(...run);
        i = j;
      } else { blocks.push(rows[i]); i += 1; }
    }
    const fold = (row) => h('button', {key: `fold-${row.at}`, type: 'button', className: 'iiid-diff__fold',
      onClick: () => setExpanded({...expanded, [row.at]: true})}, `… ${row.hidden} unchanged lines`);
    const cell = (no, text, cls) => [h('span', {className: 'iiid-diff__no', key: 'n'}, no ?? ''), h('span', {className: `iiid-diff__text ${cls}`, key: 't'}, text ?? '')];
    let body;
    const sideClass = (text, kind, mark) => (text == null ? 'is-none' : (kind === 'same' ? '' : mark));
    const pairRow = (row, k) => {
      if (row.kind === 'fold') return h('div', {key: k, className: 'iiid-diff__foldrow'}, fold(row));
      return h('div', {key: k, className: `iiid-diff__row iiid-diff__row--pair is-${row.kind}`},
        h('div', {className: 'iiid-diff__half'}, cell(row.leftNo, row.left, sideClass(row.left, row.kind, 'is-del'))),
        h('div', {className: 'iiid-diff__half'}, cell(row.rightNo, row.right, sideClass(row.right, row.kind, 'is-add'))));
    };
    const leftRow = (row, k) => {
      if (row.kind === 'fold') return fold(row);
      return h('div', {key: k, className: `iiid-diff__row is-${row.kind}`}, cell(row.leftNo, row.left, sideClass(row.left, row.kind, 'is-del')));
    };
    if (layout === 'split') {
      const captions = [h('div', {key: 'cl', className: 'iiid-diff__caption'}, leftCaption), h('div', {key: 'cr', className: 'iiid-diff__caption'}, rightCaption)];
      body = editor
        ? h('div', {className: 'iiid-diff__split iiid-diff__split--editor'}, captions,
          h('div', {className: 'iiid-diff__col'}, blocks.filter((r) => r.kind === 'fold' || r.left != null).map(leftRow)),
          h('div', {className: 'iiid-diff__col'}, editor))
        : h('div', {className: 'iiid-diff__split'}, captions, blocks.map(pairRow));
    } else {
      const lines = [];
      blocks.forEach((row, k) => {
        if (row.kind === 'fold') { lines.push(fold(row)); return; }
        if (row.kind === 'same') lines.push(h('div', {key: `${k}s`, className: 'iiid-diff__uline'}, h('span', {className: 'iiid-diff__mark'}, ' '), row.left));
        if (row.left != null && row.kind !== 'same') lines.push(h('div', {key: `${k}d`, className: 'iiid-diff__uline is-del'}, h('span', {className: 'iiid-diff__mark'}, '−'), row.left));
        if (row.right != null && row.kind !== 'same') lines.push(h('div', {key: `${k}a`, className: 'iiid-diff__uline is-add'}, h('span', {className: 'iiid-diff__mark'}, '+'), row.right));
      });
      body = h('div', {className: 'iiid-diff__unified'},
        h('div', {className: 'iiid-diff__caption'}, `${leftCaption} → ${rightCaption}`),
        editor ? editor : (lines.length ? lines : h('div', {className: 'iiid-muted'}, 'No differences.')));
    }
    return h('div', {className: 'iiid-diff'},
      h('div', {className: 'iiid-diff__bar'}, h(Choice, {label: 'Diff layout', value: layout, onChange: setLayout,
        options: [{value: 'split', label: 'Split'}, {value: 'unified', label: 'Unified'}]})),
      body);
  }

  function DiffDialog({open, onClose, title, note, left, right, leftCaption, rightCaption, narrow}) {
    return h(Dialog, {open, onClose, title, wide: true, footer: h(Button, {onClick: onClose}, 'Close')},
      note ? h('p', {className: 'iiid-muted'}, note) : null,
      h(DiffView, {left, right, leftCaption, rightCaption, narrow}));
  }

  /**
   * A rejection told once, in people's words (`humanError`): one sentence, an optional action
   * button, and the worker's own text folded under Details.
   */
  function ErrorNote({error, context, onAction, title}) {
    if (!error) return null;
    const said = humanError(error, context);
    return h('div', {className: 'iiid-banner iiid-banner--alert iiid-errornote', role: 'alert'},
      h('div', {className: 'iiid-errornote__line'},
        title ? h('strong', {className: 'iiid-banner__title'}, title, ' ') : null,
        h('span', {className: 'iiid-errornote__sentence'}, said.sentence),
        said.action && onAction ? h(Button, {onClick: () => onAction(said.action)}, said.actionLabel) : null),
      h('details', {className: 'iiid-errornote__details'}, h('summary', null, 'Details'),
        h('pre', {className: 'iiid-errornote__raw'}, cleanError(error))));
  }

  function Confirm({open, title, text, confirmLabel, onConfirm, onCancel, danger}) {
    return h(Dialog, {open, onClose: onCancel, title,
      footer: [h(Button, {key: 'c', onClick: onCancel}, 'Cancel'), h(Button, {key: 'ok', variant: danger ? 'danger' : 'primary', onClick: onConfirm}, confirmLabel)]},
    h('p', null, text));
  }

  /**
   * Edit / Split / Preview: the editor stays mounted (hidden in Preview) so its undo history
   * survives; in Split a draggable separator (also ArrowLeft / ArrowRight) sets the ratio, which
   * `onRatio` persists once the drag ends.
   */
  function SplitLayout({mode, ratio, onRatio, editor, preview}) {
    const container = useRef(null);
    const [dragging, setDragging] = useState(null);
    const shown = clampRatio(dragging ?? ratio);
    const fromEvent = (e) => {
      const rect = container.current ? container.current.getBoundingClientRect() : null;
      return rect ? ratioFromPointer(e.clientX, rect.left, rect.width) : shown;
    };
    const separator = h('div', {
      key: 'sep', role: 'separator', tabIndex: 0, className: `iiid-split__handle${dragging != null ? ' is-dragging' : ''}`,
      'aria-orientation': 'vertical', 'aria-label': 'Resize editor and preview', 'aria-valuemin': 20, 'aria-valuemax': 80,
      'aria-valuenow': Math.round(shown * 100),
      onPointerDown: (e) => { e.preventDefault(); if (e.currentTarget.setPointerCapture) e.currentTarget.setPointerCapture(e.pointerId); setDragging(fromEvent(e)); },
      onPointerMove: (e) => { if (dragging != null) setDragging(fromEvent(e)); },
      onPointerUp: (e) => { if (dragging != null) { const next = fromEvent(e); setDragging(null); onRatio(next); } },
      onPointerCancel: () => setDragging(null),
      onKeyDown: (e) => {
        const step = e.key === 'ArrowLeft' ? -0.05 : (e.key === 'ArrowRight' ? 0.05 : 0);
        if (step) { e.preventDefault(); onRatio(clampRatio(shown + step)); }
      },
    });
    return h('div', {className: `iiid-split iiid-split--${mode}`, ref: container,
      style: mode === 'split' ? {gridTemplateColumns: `minmax(0, ${shown}fr) 8px minmax(0, ${1 - shown}fr)`} : undefined},
    h('div', {key: 'edit', className: 'iiid-split__edit', hidden: mode === 'preview'}, editor),
    mode === 'split' ? separator : null,
    mode !== 'edit' ? h('div', {key: 'preview', className: 'iiid-split__preview'}, preview) : null);
  }

  /** Subscribe to one of the worker's trigger types for the life of a component (§2.7). */
  function useSubscription(triggerType, topic, subscriber, handler, active = true) {
    const ref = useRef(handler);
    ref.current = handler;
    useEffect(() => {
      if (!active || !host || !host.iii || typeof host.iii.on !== 'function') return undefined;
      subscriberCounter += 1;
      const id = subscriberId(topic, subscriber, subscriberCounter);
      let off = null;
      let offTrigger = null;
      try {
        off = host.iii.on(id, (payload) => ref.current(payload));
        offTrigger = host.iii.registerTrigger({type: triggerType, function_id: `${id}::${host.iii.browserId}`, config: {}});
      } catch (error) {
        console.warn(`[iii-directory] subscription ${id} unavailable: ${error}`);
      }
      return () => {
        try { if (typeof offTrigger === 'function') offTrigger(); } catch { /* already gone */ }
        try { if (typeof off === 'function') off(); } catch { /* already gone */ }
      };
    }, [triggerType, topic, subscriber, active]);
  }

  /** A function that runs `fn` once, 250 ms after the last of a burst of calls. */
  function useCoalesced(fn, delay = 250) {
    const ref = useRef(fn);
    ref.current = fn;
    const timer = useRef(null);
    useEffect(() => () => clearTimeout(timer.current), []);
    return useCallback(() => {
      clearTimeout(timer.current);
      timer.current = setTimeout(() => ref.current(), delay);
    }, [delay]);
  }

  const rawCall = (functionId, payload, timeoutMs) => host.iii.trigger(functionId, payload ?? {}, timeoutMs ? {timeoutMs} : undefined);
  // Every answer proves the worker reachable; a call the engine cannot route starts the probe.
  const reach = createReachability(() => rawCall('directory::kits::list', {}, 10000));
  const call = (functionId, payload, timeoutMs) => rawCall(functionId, payload, timeoutMs).then((res) => { reach.markUp(); return res; }, (error) => {
    if (transportProblem(error) === 'unreachable' && String(functionId).startsWith('directory::')) reach.markDown();
    throw error;
  });
  /** `{down, nextAt, attempt}` of the worker's reachability, re-rendering on change. */
  function useReachability() {
    const [state, setState] = useState(reach.state);
    useEffect(() => reach.subscribe(setState), []);
    return state;
  }

  return {h, React, host, Boundary, Icon, Button, TextInput, Dialog, Markdown, Editor, Choice, Tabs, Checkbox, Chip, Alert, Skeleton,
    StepList, CopyButton, CodeLine, DiffView, DiffDialog, Confirm, ErrorNote, SplitLayout, useSubscription, useCoalesced, call, reach, useReachability};
}

export const MIN = 60 * 1000;
export const TIMEOUT_2_MIN = 2 * MIN;
export const TIMEOUT_20_MIN = 20 * MIN;

// ============================================================================ Skills and Agent Profiles (§4.3, §4.4)

/**
 * Body search timing: a keystroke after a quiet spell of this long asks the worker at once; a
 * keystroke inside a burst of typing waits for this long a pause. At most this many words are searched.
 */
export const BODY_SEARCH_PAUSE_MS = 150;
const BODY_SEARCH_WORDS = 4;
/** Rows of the first, small `skills::list` answer that fills the first screen while the whole list is read. */
const FIRST_SCREEN_ROWS = 60;
const SKILL_ID = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;
const AGENT_ID = /^[a-z0-9_-]{1,64}$/;
const AGENT_ICONS = ['agent', 'code', 'search', 'terminal', 'database', 'test', 'review', 'docs', 'design'];
const AGENT_COLORS = ['neutral', 'blue', 'purple', 'teal', 'green', 'amber', 'rose'];
const EFFORTS = ['minimal', 'low', 'medium', 'high'];
const AGENT_TEMPLATE = '---\nname: \ndescription: \n---\n';

/** Per-collection adapters of the generic browser. */
export const ADAPTERS = {
  skills: {
    collection: 'skills', noun: 'skill', nouns: 'skills', newLabel: 'New skill', idLabel: 'New skill id', crumb: 'Skill',
    list: {fn: 'directory::skills::list', payload: {include_description: true, include_origin: true}, field: 'skills', first: FIRST_SCREEN_ROWS},
    get: 'directory::skills::get', update: 'directory::skills::update', create: 'directory::skills::create', remove: 'directory::skills::delete',
    trigger: 'directory::skills::on-change', topic: 'skills-on-change', subscriber: 'browser-skills',
    loadError: 'Could not load skills.', empty: 'No skills yet.',
    key: (row) => row.id, title: (row) => row.title || row.id,
    text: (res) => (typeof res.raw === 'string' ? res.raw : (res.body ?? '')),
    idOk: (id) => SKILL_ID.test(id),
    template: (id) => `# ${String(id || '').split('/').pop()}\n\n`,
  },
  agents: {
    collection: 'agents', noun: 'agent profile', nouns: 'agent profiles', newLabel: 'New agent profile', idLabel: 'New agent profile id', crumb: 'Agent profile',
    list: {fn: 'directory::agents::list', payload: {}, field: 'agents'},
    get: 'directory::agents::get', update: 'directory::agents::update', create: 'directory::agents::create', remove: 'directory::agents::delete',
    trigger: 'directory::agents::on-change', topic: 'agents-on-change', subscriber: 'browser-agents',
    loadError: 'Could not load agent profiles.', empty: 'No agent profiles yet.',
    key: (row) => row.id, title: (row) => row.name || row.id,
    text: (res) => (typeof res.raw === 'string' ? res.raw : (res.system_prompt ?? '')),
    idOk: (id) => AGENT_ID.test(id),
    template: () => AGENT_TEMPLATE,
  },
};

function asList(value) {
  if (Array.isArray(value)) return value;
  if (value == null || value === '') return [];
  return [String(value)];
}

/** The models picker answer read defensively: strings, or objects with id / name, maybe under `models`. */
export function modelIds(answer) {
  const list = Array.isArray(answer) ? answer : (answer && Array.isArray(answer.models) ? answer.models : []);
  return list.map((m) => (typeof m === 'string' ? m : (m && (m.id || m.name)))).filter((m) => typeof m === 'string' && m);
}

/** How long to wait before asking for a body search: at once after a quiet spell of `pause` ms, else `pause`. */
export function bodySearchDelay(lastChange, now, pause) {
  return now - lastChange >= pause ? 0 : pause;
}

/** The keys of a body search's answer: its `ids` (`ids_only`), else the keys of its rows. */
export function bodyMatchKeys(res, adapter) {
  if (res && Array.isArray(res.ids)) return new Set(res.ids);
  return new Set(((res && res[adapter.list.field]) || []).map((row) => adapter.key(row)));
}

/** A row with no file behind it: a built-in (bundled) entry. */
function isBuiltinRow(row) {
  return !!(row && (row.builtin || (row.source && row.source.kind === 'builtin')));
}

function createBrowsers(ui) {
  const {h, React, Button, TextInput, Dialog, Markdown, Editor, Choice, Checkbox, Chip, Alert, Skeleton, Confirm, Icon,
    SplitLayout, useSubscription, useCoalesced, call, DiffView, ErrorNote, useReachability} = ui;
  const {useState, useEffect, useRef, useMemo, useCallback} = React;

  const ROW_HEIGHT = 78;
  const GROUP_HEIGHT = 30;
  const WINDOW_FROM = 80;

  /**
   * The entry list. Up to WINDOW_FROM items render in full; longer lists render only the rows
   * near the sidebar's viewport (fixed row heights, spacers above and below), so typing and
   * opening stay cheap at a thousand skills.
   */
  function WindowedList({items, label, renderRow, scrollRef, activeKey, reveal, partial}) {
    const windowed = items.length > WINDOW_FROM;
    const listRef = useRef(null);
    const revealed = useRef(null);
    const [view, setView] = useState({top: 0, height: 800});
    const offsets = useMemo(() => {
      if (!windowed) return null;
      const out = new Float64Array(items.length + 1);
      for (let i = 0; i < items.length; i += 1) out[i + 1] = out[i] + (items[i].type === 'group' ? GROUP_HEIGHT : ROW_HEIGHT);
      return out;
    }, [items, windowed]);
    useEffect(() => {
      const scroller = scrollRef && scrollRef.current;
      if (!windowed || !scroller) return undefined;
      let frame = 0;
      const measure = () => {
        frame = 0;
        const list = listRef.current;
        const listTop = list ? list.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop : 0;
        setView((v) => {
          const next = {top: Math.max(0, scroller.scrollTop - listTop), height: scroller.clientHeight || 800};
          return v.top === next.top && v.height === next.height ? v : next;
        });
      };
      const onScroll = () => { if (!frame) frame = requestAnimationFrame(measure); };
      measure();
      scroller.addEventListener('scroll', onScroll, {passive: true});
      globalThis.addEventListener('resize', onScroll);
      return () => { scroller.removeEventListener('scroll', onScroll); globalThis.removeEventListener('resize', onScroll); if (frame) cancelAnimationFrame(frame); };
    }, [windowed, scrollRef]);
    // Screen readers hear the whole list's size and each row's place in it, also when windowed.
    const positions = useMemo(() => {
      const out = new Map();
      for (const item of items) if (item.type !== 'group') out.set(item.key, out.size + 1);
      return out;
    }, [items]);
    const render = (item) => (item.type === 'group'
      ? h('li', {key: item.key, className: 'iiid-listgroup', role: 'presentation'}, h('h3', {className: 'iiid-listgroup__name'}, item.name),
        partial ? null : h('span', {className: 'iiid-muted', 'aria-label': plural(item.count, 'entry', 'entries')}, String(item.count)))
      : renderRow(item, item.key === activeKey, positions.get(item.key), partial ? -1 : positions.size));
    // A row asked for (a skill just created or restored) is scrolled into view once it is listed.
    useEffect(() => {
      const scroller = scrollRef && scrollRef.current;
      if (!reveal || revealed.current === reveal.n || !scroller) return;
      const at = items.findIndex((item) => item.key === reveal.key && item.type !== 'group');
      if (at < 0) return;
      revealed.current = reveal.n;
      if (!windowed) {
        const node = listRef.current && [...listRef.current.querySelectorAll('button[data-key]')].find((b) => b.dataset.key === reveal.key);
        if (node) node.scrollIntoView({block: 'nearest'});
        return;
      }
      const list = listRef.current;
      const listTop = list ? list.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop : 0;
      const top = listTop + offsets[at];
      if (top < scroller.scrollTop || top + ROW_HEIGHT > scroller.scrollTop + scroller.clientHeight) {
        scroller.scrollTop = Math.max(0, top - scroller.clientHeight / 2);
      }
    }, [reveal, items, windowed]);
    if (!windowed) return h('ul', {className: 'iiid-list', 'aria-label': label, ref: listRef}, items.map(render));
    const [start, end] = windowRange(offsets, view.top, view.height);
    return h('ul', {className: 'iiid-list iiid-list--windowed', 'aria-label': label, ref: listRef,
      style: {paddingTop: `${offsets[start]}px`, paddingBottom: `${offsets[items.length] - offsets[end]}px`}},
    items.slice(start, end).map(render));
  }

  const EntryRow = React.memo(function EntryRow({adapter, row, active, onOpen, badges, posInSet, setSize}) {
    const key = adapter.key(row);
    const meta = adapter.collection === 'skills'
      ? [formatSize(row.bytes), formatAgo(row.modified_at)].filter(Boolean).join(' · ')
      : originLabel(row);
    // The name is short (title and id); chips, summary and meta are the description.
    const title = adapter.title(row);
    const about = `iiid-${adapter.collection}-${key}`;
    const chips = [row.hidden ? h(Chip, {key: 'hidden'}, 'hidden') : null, ...(badges || []).map((b) => h(Chip, {key: b.text, tone: b.tone}, b.text))].filter(Boolean);
    return h('li', {className: `iiid-row${active ? ' is-active' : ''}`, 'aria-posinset': posInSet, 'aria-setsize': setSize},
      h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => onOpen(key), 'aria-current': active ? 'true' : undefined,
        'aria-label': title && title !== key ? `${title} · ${key}` : key, 'data-key': key,
        'aria-describedby': [chips.length ? `${about}-chips` : '', row.description ? `${about}-desc` : '', `${about}-meta`].filter(Boolean).join(' ')},
        adapter.collection === 'agents'
          ? h('span', {className: `iiid-avatar iiid-color-${row.color || 'neutral'}`, 'aria-hidden': 'true'}, row.logo || (row.name || row.id || '?').slice(0, 1).toUpperCase())
          : null,
        h('span', {className: 'iiid-row__main'},
          h('span', {className: 'iiid-row__title'}, h('span', {className: 'iiid-row__name'}, title),
            chips.length ? h('span', {id: `${about}-chips`, style: {display: 'contents'}}, chips) : null),
          h('span', {className: 'iiid-row__id'}, key),
          row.description ? h('span', {className: 'iiid-row__desc', id: `${about}-desc`}, row.description) : null,
          h('span', {className: 'iiid-row__meta', id: `${about}-meta`}, meta))));
  });

  /** Picker with Selected / Available lists (§4.4). */
  function Picker({title, searchLabel, own, inherited, inheritedFrom, unknown, available, status, error, onRetry, onChange, failText, hideInternal}) {
    const [query, setQuery] = useState('');
    const [highlight, setHighlight] = useState(0);
    const [showInternal, setShowInternal] = useState(false);
    const unknownSet = new Set(unknown || []);
    const q = query.trim().toLowerCase();
    const ownSet = new Set(own);
    const internalCount = hideInternal ? (available || []).filter(isInternalFunction).length : 0;
    const candidates = (available || []).filter((item) => !ownSet.has(item.id) && (showInternal || !hideInternal || !isInternalFunction(item))
      && (!q || item.id.toLowerCase().includes(q) || (item.description || '').toLowerCase().includes(q))).slice(0, 50);
    const add = (id) => { if (id && !ownSet.has(id)) onChange([...own, id]); };
    const onKeyDown = (e) => {
      if (e.key === 'ArrowDown') { e.preventDefault(); setHighlight(Math.min(highlight + 1, Math.max(candidates.length - 1, 0))); }
      else if (e.key === 'ArrowUp') { e.preventDefault(); setHighlight(Math.max(highlight - 1, 0)); }
      else if (e.key === 'Enter') { e.preventDefault(); const item = candidates[highlight]; if (item) { add(item.id); setHighlight(0); } }
      else if (e.key === 'Escape') { e.preventDefault(); setQuery(''); setHighlight(0); }
    };
    const inheritedOnly = (inherited || []).filter((id) => !ownSet.has(id));
    return h('section', {className: 'iiid-picker', 'aria-label': title},
      h('h4', {className: 'iiid-field__label'}, title),
      h('div', {className: 'iiid-picker__cols'},
        h('div', {className: 'iiid-picker__col'},
          h('div', {className: 'iiid-picker__head'}, 'Selected'),
          own.length ? h('ul', {className: 'iiid-picker__list'}, own.map((id) => h('li', {key: id, className: 'iiid-picker__item'},
            h('code', null, id), unknownSet.has(id) ? h(Chip, {tone: 'warn'}, 'unknown') : null,
            h('button', {type: 'button', className: 'iiid-iconbtn', 'aria-label': `Remove ${id}`, onClick: () => onChange(own.filter((x) => x !== id))}, h(Icon, {name: 'close', size: 14})))))
            : h('p', {className: 'iiid-muted'}, 'None selected.'),
          inheritedOnly.length ? h('div', {className: 'iiid-picker__inherited'},
            h('div', {className: 'iiid-picker__head'}, `inherited from ${inheritedFrom || 'the parent'}`),
            h('ul', {className: 'iiid-picker__list'}, inheritedOnly.map((id) => h('li', {key: id, className: 'iiid-picker__item is-readonly'}, h('code', null, id),
              unknownSet.has(id) ? h(Chip, {tone: 'warn'}, 'unknown') : null)))) : null),
        h('div', {className: 'iiid-picker__col'},
          h('div', {className: 'iiid-picker__head'}, 'Available'),
          h(TextInput, {value: query, onChange: (v) => { setQuery(v); setHighlight(0); }, label: searchLabel, placeholder: searchLabel, onKeyDown}),
          internalCount ? h(Checkbox, {label: `Show ${plural(internalCount, 'internal function')}`, checked: showInternal, onChange: (v) => { setShowInternal(v); setHighlight(0); }},
            `Show ${plural(internalCount, 'internal function')} (engine and console plumbing)`) : null,
          status === 'error' ? h(Alert, {tone: 'warn', role: 'status'}, h('span', null, failText), ' ', h('span', {className: 'iiid-muted'}, error), ' ', h(Button, {onClick: onRetry}, 'Retry'))
            : status === 'loading' ? h(Skeleton, {rows: 2})
              : h('ul', {className: 'iiid-picker__list', role: 'listbox', 'aria-label': `${title} available`}, candidates.map((item, i) => h('li', {
                key: item.id, role: 'option', 'aria-selected': i === highlight ? 'true' : 'false',
                className: `iiid-picker__item is-option${i === highlight ? ' is-hl' : ''}`, onMouseDown: (e) => { e.preventDefault(); add(item.id); },
              }, h('code', null, item.id), item.description ? h('span', {className: 'iiid-muted'}, item.description) : null))))));
  }

  /**
   * The models list is asked once per page, not once per profile: without a router worker (a
   * normal set-up) `router::models::list` does not exist, and the form says so once, quietly.
   */
  const models = {state: null, promise: null, toldFor: null, listeners: new Set()};
  const loadModels = (force) => {
    if (models.promise && !force) return models.promise;
    models.promise = call('router::models::list', {}).then((res) => ({status: 'ready', items: modelIds(res), error: ''}),
      (err) => ({status: 'error', items: [], error: cleanError(err)}))
      .then((state) => { models.state = state; models.listeners.forEach((l) => l(state)); return state; });
    return models.promise;
  };
  function useModels(entryKey) {
    const [state, setState] = useState(models.state || {status: 'loading', items: [], error: ''});
    const tellHere = models.toldFor == null || models.toldFor === entryKey;
    useEffect(() => {
      models.listeners.add(setState);
      loadModels(false);
      return () => { models.listeners.delete(setState); };
    }, []);
    useEffect(() => { if (tellHere && state.status === 'error') models.toldFor = entryKey; }, [tellHere, state.status, entryKey]);
    return [state, () => loadModels(true), tellHere];
  }

  /** Loads a picker catalog once per mount; failures stay inside the picker. */
  function useCatalog(fn, payload, map) {
    const [state, setState] = useState({status: 'loading', items: [], error: ''});
    const load = useCallback(() => {
      setState((s) => ({...s, status: 'loading'}));
      call(fn, payload).then((res) => setState({status: 'ready', items: map(res), error: ''}),
        (err) => setState({status: 'error', items: [], error: cleanError(err)}));
    }, [fn]);
    useEffect(() => { load(); }, [load]);
    return [state, load];
  }

  /** The agent profile form: every field edits the draft text through setFrontmatterFields. */
  function AgentForm({draft, onDraft, resolved, agents, creating, narrow, entryKey}) {
    const parsed = useMemo(() => parseFrontmatter(draft), [draft]);
    const f = parsed.fields;
    const set = (changes) => onDraft(setFrontmatterFields(draft, changes));
    const [models, reloadModels, tellModels] = useModels(entryKey);
    const [functionsCatalog, reloadFunctions] = useCatalog('engine::functions::list', {include_internal: true}, (res) => {
      const rows = Array.isArray(res) ? res : (res && Array.isArray(res.functions) ? res.functions : []);
      return rows.map((r) => (typeof r === 'string' ? {id: r} : {id: r.function_id || r.id || r.name, description: oneLine(r.description),
        internal: !!(r.metadata && r.metadata.internal)}))
        .filter((r) => r.id).sort((a, b) => a.id.localeCompare(b.id));
    });
    const [skillsCatalog, reloadSkills] = useCatalog('directory::skills::list', {include_description: true}, (res) => (res.skills || []).map((s) => ({id: s.id, description: s.title || s.description || ''})));
    const r = resolved || {};
    const effort = typeof f.reasoning_effort === 'string' ? f.reasoning_effort : '';
    const modelListId = useMemo(() => `iiid-models-${Math.random().toString(36).slice(2, 8)}`, []);
    return h('div', {className: 'iiid-agentform'},
      r.inheritance_error ? h(Alert, {tone: 'warn', role: 'status'}, r.inheritance_error) : null,
      h('div', {className: 'iiid-agentform__identity'},
        h('span', {className: `iiid-avatar iiid-avatar--lg iiid-color-${f.color || 'neutral'}`, 'aria-hidden': 'true'}, f.logo || (f.name || '?').slice(0, 1).toUpperCase()),
        h('div', {className: 'iiid-agentform__names'},
          h(TextInput, {value: typeof f.name === 'string' ? f.name : '', onChange: (v) => set({name: v}), label: 'Name', placeholder: 'Name (required)', className: 'iiid-input--title'}),
          h(TextInput, {value: typeof f.description === 'string' ? f.description : '', onChange: (v) => set({description: v}), label: 'Description', placeholder: 'Description'}))),
      h('div', {className: 'iiid-grid'},
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Icon'),
          h('select', {className: 'iiid-select', 'aria-label': 'Icon', value: f.icon || '', onChange: (e) => set({icon: e.target.value || null})},
            h('option', {value: ''}, 'none'), AGENT_ICONS.map((i) => h('option', {key: i, value: i}, i)))),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Colour'),
          h('select', {className: 'iiid-select', 'aria-label': 'Colour', value: f.color || '', onChange: (e) => set({color: e.target.value || null})},
            h('option', {value: ''}, 'default'), AGENT_COLORS.map((c) => h('option', {key: c, value: c}, c)))),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Logo'),
          h(TextInput, {value: typeof f.logo === 'string' ? f.logo : '', onChange: (v) => set({logo: v}), label: 'Logo', placeholder: 'an emoji'})),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Model'),
          h(TextInput, {value: typeof f.model === 'string' ? f.model : '', onChange: (v) => set({model: v}), label: 'Model', placeholder: r.model || 'the send decides', list: modelListId}),
          h('datalist', {id: modelListId}, models.items.map((m) => h('option', {key: m, value: m}))),
          models.status === 'error' && tellModels ? h('span', {className: 'iiid-hint', title: models.error}, 'Models could not be loaded; type a model id. ',
            h('button', {type: 'button', className: 'iiid-linkbtn', onClick: reloadModels}, 'Retry')) : null),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Reasoning effort'),
          h('select', {className: 'iiid-select', 'aria-label': 'Reasoning effort', value: EFFORTS.includes(effort) || !effort ? effort : '__custom',
            onChange: (e) => set({reasoning_effort: e.target.value === '__custom' ? effort || 'custom' : (e.target.value || null)})},
          h('option', {value: ''}, 'default'), EFFORTS.map((x) => h('option', {key: x, value: x}, x)), h('option', {value: '__custom'}, effort && !EFFORTS.includes(effort) ? effort : 'other…'))),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Extends'),
          h('select', {className: 'iiid-select', 'aria-label': 'Extends', value: f.extends || '', onChange: (e) => set({extends: e.target.value || null})},
            h('option', {value: ''}, 'none'), (agents || []).filter((a) => a.id !== r.id).map((a) => h('option', {key: a.id, value: a.id}, a.id))))),
      h(Picker, {title: 'Skills', searchLabel: 'Search skills', own: asList(f.skills), inherited: r.skills, inheritedFrom: f.extends || r.extends,
        unknown: r.unknown_skills, available: skillsCatalog.items, status: skillsCatalog.status, error: skillsCatalog.error, onRetry: reloadSkills,
        onChange: (list) => set({skills: list}), failText: 'Skills could not be loaded.'}),
      h(Picker, {title: 'Preloaded functions', searchLabel: 'Search functions', own: asList(f.functions), inherited: r.functions, inheritedFrom: f.extends || r.extends,
        unknown: r.unknown_functions, available: functionsCatalog.items, status: functionsCatalog.status, error: functionsCatalog.error, onRetry: reloadFunctions, hideInternal: true,
        onChange: (list) => set({functions: list}), failText: 'Functions could not be loaded.'}),
      h('div', {className: 'iiid-grid'},
        h(Checkbox, {label: 'Hidden', checked: f.hidden === true, onChange: (v) => set({hidden: v ? true : null})}, 'Hidden from the new-session gallery'),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Composer placeholder'),
          h(TextInput, {value: typeof f.composer_placeholder === 'string' ? f.composer_placeholder : '', maxLength: 200,
            onChange: (v) => set({composer_placeholder: v.slice(0, 200)}), label: 'Composer placeholder', placeholder: 'An example request'}))),
      h('label', {className: 'iiid-field iiid-field--full'}, h('span', {className: 'iiid-field__label'}, 'System prompt'),
        h(Editor, {value: parsed.body, onChange: (body) => onDraft(setFrontmatterFields(draft, {body})), label: 'System prompt', rows: narrow ? 10 : 14})));
  }

  /** Skill structured fields (Title, Description) above the markdown body. */
  function SkillFields({draft, onDraft, mode, narrow, ratio, onRatio, readOnly}) {
    const parsed = useMemo(() => parseFrontmatter(draft), [draft]);
    const f = parsed.fields;
    const titleKey = Object.prototype.hasOwnProperty.call(f, 'title') ? 'title' : 'name';
    const heading = typeof f[titleKey] === 'string' ? null : firstHeading(parsed.body);
    const setTitle = (v) => onDraft(heading ? setFrontmatterFields(draft, {body: setFirstHeading(parsed.body, v)}) : setFrontmatterFields(draft, {[titleKey]: v}));
    const editor = h(Editor, {value: parsed.body, label: 'Skill body', rows: narrow ? 12 : 20, readOnly,
      onChange: (body) => onDraft(setFrontmatterFields(draft, {body}))});
    const effective = narrow && mode === 'split' ? 'edit' : mode;
    return h('div', {className: 'iiid-skilldoc'},
      h('div', {className: 'iiid-grid'},
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Title'),
          h(TextInput, {value: typeof f[titleKey] === 'string' ? f[titleKey] : (heading ? heading.text : ''), label: 'Title', disabled: readOnly, onChange: setTitle})),
        h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Description'),
          h(TextInput, {value: typeof f.description === 'string' ? f.description : '', label: 'Description', disabled: readOnly, onChange: (v) => onDraft(setFrontmatterFields(draft, {description: v}))}))),
      h(SplitLayout, {mode: effective, ratio, onRatio, editor, preview: h(Markdown, {content: parsed.body})}));
  }

  const firstLine = (lines) => {
    const line = (lines.find((l) => l.trim() !== '') || '').trim();
    return line ? `“${line.length > 48 ? `${line.slice(0, 47)}…` : line}”` : 'nothing';
  };

  /** The merge's unresolved conflicts, each with its own way out; Save waits for all of them. */
  function ConflictList({conflicts, onTake}) {
    return h('section', {className: 'iiid-banner iiid-banner--warn iiid-conflicts', 'aria-label': 'Merge conflicts'},
      h('p', null, `${plural(conflicts.length, 'conflict')} left from the merge. Save waits until each is resolved: keep yours, keep the disk version, or edit the text between <<<<<<< and >>>>>>>.`),
      h('ol', {className: 'iiid-conflicts__list'}, conflicts.map((c, i) => h('li', {key: `${i}:${c.open}`, className: 'iiid-conflicts__item', role: 'group', 'aria-label': `Conflict ${i + 1}`},
        h('span', {className: 'iiid-conflicts__text'}, `Conflict ${i + 1}: yours ${firstLine(c.mine)} · on disk ${firstLine(c.theirs)}`),
        h(Button, {onClick: () => onTake(i, 'mine')}, 'Keep yours'),
        h(Button, {onClick: () => onTake(i, 'theirs')}, 'Keep disk version')))));
  }

  /** The generic browser of one collection: list, filter, document, save, revert, delete, create. */
  function EntryBrowser({adapter, visible, narrow, pane, request, onDirty, setNarrowDocument, kits}) {
    const [list, setList] = useState({status: 'loading', rows: [], error: ''});
    const [filter, setFilter] = useState('');
    const [doc, setDoc] = useState(null);
    const [confirm, setConfirm] = useState(null);
    const [view, setViewState] = useState(() => storageGet(`view:${pane}:${adapter.collection}`, {mode: 'edit', ratio: 0.5}));
    const token = useRef(0);
    const docRef = useRef(doc);
    docRef.current = doc;
    const filterRef = useRef(null);
    const rootRef = useRef(null);
    const sidebarRef = useRef(null);
    const [roots, setRoots] = useState(null);
    const [readOnlyIds, setReadOnlyIds] = useState(() => new Set());
    const deferredFilter = typeof React.useDeferredValue === 'function' ? React.useDeferredValue(filter) : filter;
    const updateView = (patch) => setViewState((current) => {
      const next = {...current, ...patch};
      storageSet(`view:${pane}:${adapter.collection}`, next);
      return next;
    });
    const setView = (mode) => updateView({mode});
    const setRatio = (ratio) => updateView({ratio: clampRatio(ratio)});

    const loadList = useCallback(() => call(adapter.list.fn, adapter.list.payload).then((res) => {
      const rows = (res && res[adapter.list.field]) || [];
      setList({status: 'ready', rows, error: ''});
      return rows;
    }, (err) => {
      setList((s) => (s.rows.length && s.status !== 'partial' ? {...s, error: cleanError(err)} : {status: 'error', rows: [], error: cleanError(err)}));
      return null;
    }), [adapter]);

    // The first screen comes from a small answer (`limit`) asked beside the whole list; it shows
    // only while the whole list is still on its way (`partial`: counts say "Loading…").
    useEffect(() => {
      if (adapter.list.first) {
        call(adapter.list.fn, {...adapter.list.payload, limit: adapter.list.first}).then((res) => {
          const rows = (res && res[adapter.list.field]) || [];
          setList((s) => (s.status === 'loading' ? {status: 'partial', rows, error: ''} : s));
        }, () => {});
      }
      loadList();
    }, [loadList]);
    /** Ids with a built-in behind them: this version's bundled profiles plus any row listed as built-in. */
    const builtinIds = useMemo(() => new Set(adapter.collection === 'agents'
      ? [...BUILTIN_AGENT_IDS, ...list.rows.filter(isBuiltinRow).map((row) => adapter.key(row))] : []), [list.rows, adapter]);

    const draftKey = (key) => `draft:${adapter.collection}:${key ?? 'new'}`;
    const dirty = !!doc && doc.draft !== doc.loaded;
    useEffect(() => { onDirty(dirty); }, [dirty]);
    useEffect(() => { if (setNarrowDocument) setNarrowDocument(!!doc); }, [!!doc]);

    // Drafts survive unmounting: write on every change (draftAction decides), with the text and
    // hash they are based on, so a restored draft is compared and guarded like a live edit.
    // The hash is computed when a draft is first written, once per base text (not on every open).
    const baseHash = useRef({text: null, hash: ''});
    const hashOfBase = (text) => {
      if (baseHash.current.text !== text) baseHash.current = {text, hash: sha256Hex(text)};
      return baseHash.current.hash;
    };
    useEffect(() => {
      if (!doc) return;
      const action = draftAction({loading: doc.loading, draft: doc.draft, loaded: doc.loaded});
      const key = draftKey(doc.creating ? null : doc.key);
      if (action === 'write') {
        storageSet(key, {content: doc.draft, base: doc.loaded, ...(doc.creating ? {id: doc.newId} : {base_sha256: hashOfBase(doc.loaded)}),
          saved_at: new Date().toISOString()});
      }
      else if (action === 'clear') storageSet(key, null);
    }, [doc && doc.draft, doc && doc.loaded, doc && doc.loading]);

    const fetchEntry = (key) => call(adapter.get, {id: key, raw: true});

    // Read-only skills live in the agent-skills roots: the configured folders, read once.
    useEffect(() => {
      if (adapter.collection !== 'skills' || roots) return;
      call('configuration::get', {id: 'iii-directory'}).then((res) => setRoots(readOnlyRoots(res && typeof res === 'object' && res.value ? res.value : res)),
        () => setRoots(readOnlyRoots(null)));
    }, [adapter, roots]);
    const rootsRef = useRef(roots);
    rootsRef.current = roots;
    const noteOrigin = (key, res) => {
      if (adapter.collection !== 'skills' || !res) return;
      const readOnly = isReadOnlyPath(res.path, rootsRef.current || readOnlyRoots(null));
      setReadOnlyIds((ids) => (ids.has(key) === readOnly ? ids : (() => { const next = new Set(ids); if (readOnly) next.add(key); else next.delete(key); return next; })()));
    };

    const open = useCallback((key, {force, reopening} = {}) => {
      const mine = ++token.current;
      setDoc({key, loading: true, loaded: '', draft: '', state: 'loading', resolved: null, banner: null, error: ''});
      fetchEntry(key).then((res) => {
        if (token.current !== mine) return;
        const text = adapter.text(res);
        noteOrigin(key, res);
        const restored = restoreDraft(force ? null : storageGet(draftKey(key), null), text);
        setDoc({key, loading: false, state: 'ready', resolved: res, error: '', loaded: text, draft: text, banner: null,
          ...(restored ? {...restored, diskResolved: restored.diskText != null ? res : null} : {})});
      }, (err) => {
        if (token.current !== mine) return;
        // A document reopened for this tab that is gone since just stays closed.
        if (reopening && ['D110', 'D410'].includes(errorCode(err))) { setDoc(null); return; }
        setDoc({key, loading: false, loaded: '', draft: '', state: 'error', resolved: null, banner: null, error: cleanError(err)});
      });
    }, [adapter]);

    const guard = (action, key) => {
      const current = docRef.current;
      if (current && current.draft !== current.loaded) {
        setConfirm({kind: 'discard', key: current.creating ? 'the new entry' : current.key, then: () => {
          storageSet(draftKey(current.creating ? null : current.key), null);
          action();
        }});
      } else action();
    };

    const select = (key) => {
      if (docRef.current && !docRef.current.creating && docRef.current.key === key) return;
      guard(() => open(key), key);
    };

    /** Start a new skill in the skills folder holding a read-only skill's text. */
    const copyToSkills = () => {
      const current = docRef.current;
      if (!current) return;
      const base = `${current.key}-copy`;
      token.current += 1;
      setDoc({creating: true, key: null, newId: base, loading: false, loaded: '', draft: current.loaded, state: 'ready', resolved: null, banner: null, error: ''});
    };

    const startCreate = () => guard(() => {
      const stored = storageGet(draftKey(null), null);
      const newId = stored && typeof stored.id === 'string' ? stored.id : '';
      const template = adapter.template(newId);
      token.current += 1;
      setDoc({creating: true, key: null, newId, loading: false, loaded: template, draft: stored && typeof stored.content === 'string' ? stored.content : template,
        state: 'ready', resolved: null, banner: null, error: ''});
    });

    useEffect(() => {
      if (!request) return;
      if (request.action === 'create') startCreate();
      else if (request.key) select(request.key);
    }, [request && request.id]);

    // This tab's open document survives the page being unmounted (the worker went away and its
    // assets with it) and comes back with its draft when the page is mounted again.
    const openKey = `open:${pane}:${adapter.collection}`;
    useEffect(() => {
      const key = storageGet(openKey, null, globalThis.sessionStorage);
      if (typeof key === 'string' && key && !docRef.current && !request) open(key, {reopening: true});
    }, []);
    useEffect(() => {
      if (doc && doc.creating) return;
      storageSet(openKey, doc && doc.state !== 'error' ? doc.key : null, globalThis.sessionStorage);
    }, [doc && doc.key, doc && doc.creating, doc && doc.state]);

    const clearSelection = () => guard(() => { token.current += 1; setDoc(null); });

    const onDraft = (text) => setDoc((d) => (d ? {...d, draft: text, saveError: ''} : d));

    const refreshOpen = useCallback(async () => {
      const rows = await loadList();
      const current = docRef.current;
      if (!current || current.creating || current.loading || !current.key) return;
      if (rows && !rows.some((row) => adapter.key(row) === current.key)) {
        setDoc((d) => (d && d.key === current.key ? {...d, banner: 'gone'} : d));
        return;
      }
      const mine = token.current;
      let res;
      try { res = await fetchEntry(current.key); } catch (err) {
        if (token.current === mine) setDoc((d) => (d && d.key === current.key ? {...d, banner: 'gone'} : d));
        return;
      }
      if (token.current !== mine) return;
      const text = adapter.text(res);
      setDoc((d) => {
        if (!d || d.key !== current.key) return d;
        if (d.draft === d.loaded) return {...d, loaded: text, draft: text, resolved: res, banner: null};
        if (text !== d.loaded) return {...d, banner: 'changed', diskText: text, diskResolved: res};
        return d;
      });
    }, [adapter, loadList]);

    const scheduleRefresh = useCoalesced(refreshOpen, 250);
    useSubscription(adapter.trigger, adapter.topic, adapter.subscriber, () => scheduleRefresh());

    // While the worker cannot be reached the document is read-only; when it answers again the
    // list and the open document are read anew (a failed open is retried).
    const offline = useReachability().down;
    const wasOffline = useRef(offline);
    useEffect(() => {
      if (wasOffline.current && !offline) {
        const current = docRef.current;
        if (current && current.state === 'error' && !current.creating) open(current.key);
        else refreshOpen();
      }
      wasOffline.current = offline;
    }, [offline]);

    /** Open the compare view of the draft against `disk`, the file's text now. */
    const showCompare = (disk, diskResolved) => setDoc((d) => (d ? {...d, saving: false, saveError: '', compare: {disk, diskResolved}} : d));

    const save = async ({base} = {}) => {
      const current = docRef.current;
      if (!current || current.saving || current.banner === 'gone') return;
      if (!current.creating && current.draft === current.loaded && base == null) return;
      if (blocksSave(current.draft, current.loaded)) return;
      if (base == null && current.banner === 'changed' && current.diskText != null) {
        // Compare against the file as it is now, not as the last change event read it.
        setDoc((d) => ({...d, saving: true}));
        try { const res = await fetchEntry(current.key); showCompare(adapter.text(res), res); } catch { showCompare(current.diskText, current.diskResolved); }
        return;
      }
      const expected = sha256Hex(base ?? current.loaded);
      const sent = current.draft;
      setDoc((d) => ({...d, saving: true, saveError: '', compare: null}));
      try {
        let key = current.key;
        if (current.creating) {
          const res = await call(adapter.create, {id: current.newId.trim(), content: sent});
          key = res.id || current.newId.trim();
          storageSet(draftKey(null), null);
          setReveal({key, n: Date.now()});
        } else if (adapter.collection === 'agents') {
          const before = parseFrontmatter(current.loaded);
          const after = parseFrontmatter(current.draft);
          const changedKeys = new Set([...Object.keys(before.fields), ...Object.keys(after.fields)]
            .filter((k) => JSON.stringify(before.fields[k] ?? null) !== JSON.stringify(after.fields[k] ?? null)));
          const onlyFunctions = !current.resolved?.builtin && before.body === after.body && changedKeys.size === 1 && changedKeys.has('functions');
          if (onlyFunctions) {
            const {added, removed} = functionsEdit(asList(before.fields.functions), asList(after.fields.functions));
            if (added.length) await call('directory::agents::functions::add', {id: key, functions: added});
            if (removed.length) await call('directory::agents::functions::remove', {id: key, functions: removed});
          } else {
            const res = await call(adapter.update, {id: key, content: sent, expected_sha256: expected});
            key = res.id || key;
          }
          storageSet(draftKey(current.key), null);
        } else {
          const res = await call(adapter.update, {id: key, content: sent, expected_sha256: expected});
          storageSet(draftKey(current.key), null);
          key = res.id || key;
        }
        const res = await fetchEntry(key);
        token.current += 1;
        const text = adapter.text(res);
        // A snapshot was sent: text typed while it saved stays in the draft, still unsaved.
        setDoc((d) => (d && (d.creating ? current.creating : d.key === current.key)
          ? {...afterSave(d, sent, text), key, creating: false, newId: undefined, loading: false, state: 'ready', resolved: res,
            banner: null, diskText: null, diskResolved: null, error: '', saving: false, saveError: '', compare: null, justSaved: true}
          : d));
        loadList();
      } catch (err) {
        if (!current.creating && isStaleWrite(err)) {
          try {
            const res = await fetchEntry(current.key);
            showCompare(adapter.text(res), res);
            return;
          } catch { /* fall through to the plain error */ }
        }
        setDoc((d) => ({...d, saving: false, saveError: cleanError(err), saveOp: current.creating ? 'create' : 'update'}));
      }
    };

    /** The compare view's three ways out: take the disk text, merge both, or write the draft over it. */
    const resolveCompare = (how) => {
      const current = docRef.current;
      if (!current || !current.compare) return;
      const {disk, diskResolved} = current.compare;
      if (how === 'reload') {
        storageSet(draftKey(current.key), null);
        setDoc((d) => ({...d, loaded: disk, draft: disk, resolved: diskResolved || d.resolved, banner: null, diskText: null, compare: null}));
      } else if (how === 'merge') {
        const merged = merge3(current.loaded, current.draft, disk);
        setDoc((d) => ({...d, loaded: disk, draft: merged.text, resolved: diskResolved || d.resolved, banner: null, diskText: null, compare: null}));
      } else if (how === 'overwrite') {
        setDoc((d) => ({...d, compare: null}));
        save({base: disk});
      } else setDoc((d) => ({...d, compare: null}));
    };

    const revert = () => {
      storageSet(draftKey(doc && !doc.creating ? doc.key : null), null);
      setDoc((d) => (d.diskText != null
        ? {...d, loaded: d.diskText, draft: d.diskText, resolved: d.diskResolved || d.resolved, banner: null, diskText: null, saveError: ''}
        : {...d, draft: d.loaded, saveError: ''}));
    };

    const reloadFromDisk = () => {
      storageSet(draftKey(doc.key), null);
      if (doc.diskText != null) setDoc((d) => ({...d, loaded: d.diskText, draft: d.diskText, resolved: d.diskResolved || d.resolved, banner: null, diskText: null}));
      else open(doc.key, {force: true});
    };

    // After a delete: say so with Undo (the text is still held here) and put focus on the next row.
    const [undo, setUndo] = useState(null);
    const focusRow = (key) => {
      const node = key && rootRef.current ? [...rootRef.current.querySelectorAll('button[data-key]')].find((b) => b.dataset.key === key) : null;
      if (node) node.focus();
      else if (filterRef.current) filterRef.current.focus();
    };
    const remove = async () => {
      const key = doc.key;
      const content = doc.loaded;
      const next = neighbourKey(itemsRef.current, key);
      setConfirm(null);
      try {
        await call(adapter.remove, {id: key});
        storageSet(draftKey(key), null);
        token.current += 1;
        setDoc(null);
        setUndo({key, content, error: ''});
        await loadList();
        focusRow(next);
      } catch (err) {
        setDoc((d) => ({...d, saveError: cleanError(err), saveOp: 'delete'}));
      }
    };
    const undoDelete = async () => {
      const {key, content} = undo;
      try {
        await call(adapter.create, {id: key, content});
        setUndo(null);
        await loadList();
        open(key);
        setReveal({key, n: Date.now()});
      } catch (err) {
        setUndo((u) => ({...u, error: cleanError(err)}));
      }
    };
    const [reveal, setReveal] = useState(null);

    // Ctrl/Cmd+S saves while focus is inside the page; `/` focuses the filter from anywhere on
    // the page (not while typing, not while a dialog is open, only while this list is shown).
    const saveRef = useRef(save);
    saveRef.current = save;
    useEffect(() => {
      if (!visible) return undefined;
      const node = rootRef.current;
      if (!node || !globalThis.document) return undefined;
      const onSave = (e) => {
        if ((e.ctrlKey || e.metaKey) && (e.key === 's' || e.key === 'S')) { e.preventDefault(); saveRef.current(); }
      };
      const onSlash = (e) => {
        if (e.key !== '/' || e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
        const target = e.target;
        const tag = target && target.tagName;
        const typing = tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || (target && target.isContentEditable);
        if (typing || globalThis.document.querySelector('[data-iii-ui="iii-directory"] [role="dialog"]')) return;
        const filterNode = filterRef.current;
        if (!filterNode || filterNode.getClientRects().length === 0) return;
        e.preventDefault();
        filterNode.focus();
      };
      node.addEventListener('keydown', onSave);
      globalThis.document.addEventListener('keydown', onSlash);
      return () => { node.removeEventListener('keydown', onSave); globalThis.document.removeEventListener('keydown', onSlash); };
    }, [visible]);

    const entries = useMemo(() => list.rows.map((row) => ({row, key: adapter.key(row), hay: rowHaystack(adapter, row)})), [list.rows, adapter]);
    // Bodies are searched by the worker (`search_body`), one call per word, after a pause in typing;
    // id, title and summary matches show at once from the loaded rows.
    const [bodyHits, setBodyHits] = useState(null);
    const [searchingBodies, setSearchingBodies] = useState(false);
    const bodyCache = useRef({rows: null, byWord: new Map(), asking: new Map()});
    const lastFilterChange = useRef(-Infinity);
    useEffect(() => {
      if (adapter.collection !== 'skills') return undefined;
      const words = filterWords(deferredFilter).slice(0, BODY_SEARCH_WORDS);
      if (bodyCache.current.rows !== list.rows) bodyCache.current = {rows: list.rows, byWord: new Map(), asking: new Map()};
      const cache = bodyCache.current;
      const now = globalThis.performance ? globalThis.performance.now() : Date.now();
      const delay = bodySearchDelay(lastFilterChange.current, now, BODY_SEARCH_PAUSE_MS);
      lastFilterChange.current = now;
      const missing = words.filter((w) => !cache.byWord.has(w));
      if (!missing.length) { setSearchingBodies(false); setBodyHits(words.length ? {byWord: cache.byWord} : null); return undefined; }
      let live = true;
      setSearchingBodies(true);
      // One call per word, shared by every keystroke that needs it; an answer is kept for its own
      // word only, so one that arrives after the filter moved on is never shown for the new words.
      const ask = (w) => {
        if (!cache.asking.has(w)) {
          cache.asking.set(w, call(adapter.list.fn, {search: w, search_body: true, include_description: false, ids_only: true}).then(
            (res) => { cache.byWord.set(w, bodyMatchKeys(res, adapter)); },
            () => {}).finally(() => cache.asking.delete(w)));
        }
        return cache.asking.get(w);
      };
      const run = () => Promise.all(missing.map(ask))
        .then(() => { if (live) { setSearchingBodies(false); setBodyHits({byWord: cache.byWord}); } });
      const timer = delay > 0 ? setTimeout(run, delay) : (run(), null);
      return () => { live = false; if (timer !== null) clearTimeout(timer); };
    }, [deferredFilter, list.rows, adapter]);
    const items = useMemo(() => listItems(entries, deferredFilter, adapter.collection === 'skills', bodyHits && bodyHits.byWord),
      [entries, deferredFilter, adapter, bodyHits]);

    const rowCount = useMemo(() => items.reduce((n, item) => n + (item.type === 'row' ? 1 : 0), 0), [items]);
    const itemsRef = useRef(items);
    itemsRef.current = items;
    const selectRef = useRef(select);
    selectRef.current = select;
    const onOpen = useCallback((key) => selectRef.current(key), []);
    const badgeMap = useMemo(() => {
      const context = {kits, builtinIds, readOnlyIds};
      return new Map(list.rows.map((row) => [adapter.key(row), originBadges(adapter.collection, row, context)]));
    }, [list.rows, kits, builtinIds, readOnlyIds, adapter]);
    const rowBadges = useMemo(() => {
      const out = new Map();
      for (const item of items) if (item.viaBody) out.set(item.key, [...(badgeMap.get(item.key) || []), {text: 'matches body', tone: 'neutral'}]);
      return out;
    }, [items, badgeMap]);
    const panes = narrowPanes({narrow, creating: !!(doc && doc.creating), selected: !!doc});
    const selectedRow = doc && !doc.creating ? list.rows.find((row) => adapter.key(row) === doc.key) : null;
    const builtin = !!selectedRow && isBuiltinRow(selectedRow);
    const overridesBuiltin = adapter.collection === 'agents' && !!selectedRow && !builtin && builtinIds.has(adapter.key(selectedRow));
    const openExisting = (key) => { token.current += 1; open(key); };
    const onErrorAction = (action) => {
      if (action === 'open' && doc && doc.creating) openExisting(doc.newId.trim());
      else if (action === 'reload') loadList();
      else if (action === 'copy') copyToSkills();
      else if (action === 'retry' && doc && doc.saveOp !== 'delete') save();
      else if (action === 'retry') setConfirm({kind: 'delete', key: doc.key, override: overridesBuiltin});
    };

    const sidebar = h('aside', {className: 'iiid-sidebar', hidden: !panes.list, ref: sidebarRef},
      h('div', {className: 'iiid-sidebar__tools'},
        h(Button, {variant: 'primary', onClick: startCreate}, h(Icon, {name: 'plus', size: 14}), ' ', adapter.newLabel),
        h(TextInput, {value: filter, onChange: setFilter, label: 'Filter', placeholder: adapter.collection === 'skills' ? 'Filter incl. body text  /' : 'Filter  /', inputRef: filterRef,
          title: adapter.collection === 'skills' ? 'Matches ids, titles, summaries and the text of skill bodies; / focuses it' : undefined,
          onKeyDown: (e) => { if (e.key === 'Escape') setFilter(''); }})),
      undo ? h('div', {className: 'iiid-banner iiid-banner--neutral iiid-undo', role: 'status'},
        h('span', null, undo.error ? `Could not restore ${undo.key}: ${undo.error}` : `Deleted ${undo.key}.`),
        h(Button, {onClick: undoDelete}, 'Undo'), h(Button, {variant: 'ghost', label: 'Dismiss', onClick: () => setUndo(null)}, h(Icon, {name: 'close', size: 14}))) : null,
      h('div', {className: 'iiid-count', role: 'status'}, list.status === 'loading' || list.status === 'partial' ? `Loading ${adapter.nouns}…` : (list.status === 'error' ? '' : plural(rowCount, adapter.noun)),
        searchingBodies ? ' · searching bodies…' : ''),
      list.status === 'loading' ? h(Skeleton, null)
        : list.status === 'error' ? h(Alert, {title: adapter.loadError}, h('p', null, list.error), h(Button, {onClick: loadList}, 'Retry'))
          : rowCount === 0 && list.rows.length > 0 && searchingBodies ? h('p', {className: 'iiid-empty'}, 'Searching skill bodies…')
          : rowCount === 0 && list.rows.length > 0 ? h('div', {className: 'iiid-empty'}, h('p', null, `No ${adapter.nouns} match “${deferredFilter.trim()}”.`),
            h(Button, {onClick: () => setFilter('')}, 'Clear filter'))
          : rowCount === 0 ? h('p', {className: 'iiid-empty'}, adapter.empty)
            : h(WindowedList, {items, label: adapter.nouns, scrollRef: sidebarRef, activeKey: doc && !doc.creating ? doc.key : null, reveal, partial: list.status === 'partial',
              renderRow: (item, active, posInSet, setSize) => h(EntryRow, {key: item.key, adapter, row: item.row, active, onOpen, posInSet, setSize,
                badges: rowBadges.get(item.key) || badgeMap.get(item.key)})}));

    const conflicts = useMemo(() => (doc ? conflictBlocks(doc.draft) : []), [doc && doc.draft]);
    const blocked = !!doc && conflicts.length > 0 && blocksSave(doc.draft, doc.loaded);
    let document = null;
    if (doc) {
      const isDirty = doc.draft !== doc.loaded;
      const saveState = doc.state === 'loading' ? 'Loading…' : (doc.state === 'error' ? 'Not loaded'
        : (doc.saving ? 'Saving…' : (doc.saveError ? 'Not saved' : (blocked ? 'Conflicts to resolve'
          : (isDirty ? (offline ? 'Unsaved changes · kept in this browser' : 'Unsaved changes') : (doc.creating ? 'Not created yet' : 'Saved'))))));
      const newId = doc.creating ? doc.newId.trim() : '';
      const clash = newId ? list.rows.find((row) => adapter.key(row) === newId) : null;
      const clashBuiltin = !!clash && isBuiltinRow(clash);
      const idOk = !doc.creating || (adapter.idOk(newId) && (!clash || clashBuiltin)
        && (adapter.collection !== 'agents' || String(parseFrontmatter(doc.draft).fields.name || '').trim() !== ''));
      const modes = [{value: 'edit', label: 'Edit'}, {value: 'split', label: 'Split', disabled: narrow}, {value: 'preview', label: 'Preview'}];
      const readOnly = adapter.collection === 'skills' && !doc.creating && (readOnlyIds.has(doc.key) || (!!selectedRow && selectedRow.origin === 'read_only'));
      const kitOwner = doc.creating ? null : (adapter.collection === 'skills' ? kitOfSkill(doc.key, kits)
        : (selectedRow && selectedRow.source && selectedRow.source.kind === 'kit' ? selectedRow.source.kit : null));
      const mode = narrow && view.mode === 'split' ? 'edit' : view.mode;
      document = h('section', {className: 'iiid-doc', hidden: !panes.document, 'aria-label': doc.creating ? adapter.newLabel : `${adapter.crumb} ${doc.key}`},
        h('div', {className: 'iiid-doc__bar'},
          narrow ? h(Button, {variant: 'ghost', label: 'Back', onClick: clearSelection}, h(Icon, {name: 'back'}), h('span', {className: 'iiid-btn__text'}, ' Back')) : null,
          h('span', {className: 'iiid-crumb'}, doc.creating ? adapter.newLabel : `${adapter.crumb} · ${doc.key}`),
          h('span', {className: 'iiid-spacer'}),
          h(Choice, {label: 'View mode', value: mode, onChange: setView, options: modes}),
          h('span', {className: `iiid-savestate${doc.saveError ? ' is-error' : ''}`, role: 'status'}, saveState),
          readOnly ? h(Button, {variant: 'primary', onClick: copyToSkills, disabled: doc.state !== 'ready'}, 'Copy to skills folder')
          : doc.creating
            ? h(Button, {variant: 'primary', disabled: !idOk || doc.saving, onClick: () => save()}, doc.saving ? 'Saving…' : (clashBuiltin ? 'Create override' : 'Create'))
            : h(Button, {variant: 'primary', disabled: doc.saving || !isDirty || blocked || offline || doc.banner === 'gone' || doc.state !== 'ready', onClick: () => save(),
              title: offline ? 'The worker is not reachable' : (blocked ? 'Resolve the merge conflicts first' : (isDirty ? undefined : 'Nothing changed since the last save'))},
            doc.saving ? 'Saving…' : 'Save'),
          readOnly ? null : h(Button, {disabled: !isDirty, onClick: revert}, 'Revert'),
          !doc.creating && !builtin && !readOnly ? h(Button, {variant: 'danger', onClick: () => setConfirm({kind: 'delete', key: doc.key, override: overridesBuiltin}), disabled: doc.state !== 'ready',
            label: overridesBuiltin ? 'Delete override' : 'Delete'}, h(Icon, {name: 'trash', size: 14}), h('span', {className: 'iiid-btn__text'}, overridesBuiltin ? ' Delete override' : ' Delete')) : null),
        doc.banner === 'changed' ? h(Alert, {tone: 'warn', role: 'alert'}, h('span', null, `${doc.key} changed on disk while you were editing.`), ' ',
          h(Button, {onClick: reloadFromDisk}, 'Reload'), h(Button, {variant: 'ghost', onClick: () => setDoc((d) => ({...d, banner: null}))}, 'Keep editing')) : null,
        doc.banner === 'gone' ? h(Alert, {tone: 'alert'}, `${doc.key} no longer exists on disk.`) : null,
        readOnly ? h(Alert, {tone: 'neutral', role: 'status'}, h('span', null, 'Read-only: another tool installed this skill in an agent-skills folder. Copy it to your skills folder to change it.')) : null,
        kitOwner && isDirty ? h(Alert, {tone: 'warn', role: 'status'},
          `This ${adapter.noun} comes from kit ${kitOwner}. Saving makes it differ from the kit; the next update of the kit will ask you to merge.`) : null,
        blocked ? h(ConflictList, {conflicts, onTake: (i, side) => onDraft(takeSide(docRef.current.draft, i, side))}) : null,
        h(ErrorNote, {error: doc.saveError, context: {op: doc.saveOp || 'update', noun: adapter.noun}, onAction: onErrorAction}),
        clash && clashBuiltin ? h(Alert, {tone: 'warn', role: 'status'},
          `“${newId}” is a built-in ${adapter.noun}. Creating it saves a local override that replaces the built-in; new sessions that use “${newId}” get yours until you delete it.`) : null,
        clash && !clashBuiltin ? h('div', {className: 'iiid-banner iiid-banner--warn iiid-banner--row', role: 'status'},
          h('span', null, `${/^[aeiou]/.test(adapter.noun) ? 'An' : 'A'} ${adapter.noun} with this id already exists.`), h(Button, {onClick: () => openExisting(newId)}, 'Open it')) : null,
        doc.creating ? h('label', {className: 'iiid-field'}, h('span', {className: 'iiid-field__label'}, 'Id'),
          h(TextInput, {value: doc.newId, label: adapter.idLabel, placeholder: adapter.collection === 'skills' ? 'team/how-to' : 'my-agent',
            onChange: (v) => setDoc((d) => {
              const template = adapter.template(v);
              const untouched = d.draft === d.loaded;
              return {...d, newId: v, loaded: adapter.collection === 'skills' ? template : d.loaded, draft: untouched && adapter.collection === 'skills' ? template : d.draft};
            })}),
          doc.newId && !adapter.idOk(doc.newId.trim()) ? h('span', {className: 'iiid-fielderror'}, adapter.collection === 'skills'
            ? 'Use lowercase segments separated by /.' : 'Use 1–64 lowercase letters, digits, _ or -.') : null) : null,
        doc.state === 'loading' ? h(Skeleton, {rows: 6})
          : doc.state === 'error' ? h('div', {className: 'iiid-docerror'},
            h(ErrorNote, {error: doc.error, title: `Could not load ${doc.key}.`, context: {op: 'get', noun: adapter.noun}, onAction: (action) => (action === 'reload' ? loadList() : open(doc.key))}),
            humanError(doc.error, {op: 'get'}).action ? null : h(Button, {onClick: () => open(doc.key)}, 'Retry'))
            : adapter.collection === 'skills'
              ? h(SkillFields, {draft: doc.draft, onDraft, mode, narrow, ratio: view.ratio, onRatio: setRatio, readOnly: readOnly || offline})
              : h(SplitLayout, {mode, ratio: view.ratio, onRatio: setRatio,
                editor: h(AgentForm, {draft: doc.draft, onDraft, resolved: doc.resolved, agents: list.rows, creating: doc.creating, narrow, entryKey: doc.creating ? '' : doc.key}),
                preview: h(Markdown, {content: parseFrontmatter(doc.draft).body})}));
    } else if (!narrow) {
      document = h('section', {className: 'iiid-doc iiid-doc--empty'}, h('p', {className: 'iiid-muted'}, `Select ${/^[aeiou]/.test(adapter.noun) ? 'an' : 'a'} ${adapter.noun} or start a new one.`));
    }

    return h('div', {className: 'iiid-browser', ref: rootRef, hidden: !visible},
      sidebar, document,
      h(Confirm, {open: !!confirm && confirm.kind === 'discard', title: 'Discard changes?', text: confirm && confirm.kind === 'discard' ? `Discard unsaved changes to ${confirm.key}?` : '',
        confirmLabel: 'Discard', danger: true, onCancel: () => setConfirm(null), onConfirm: () => { const then = confirm.then; setConfirm(null); then(); }}),
      h(Confirm, {open: !!confirm && confirm.kind === 'delete', title: confirm && confirm.override ? 'Delete your override?' : `Delete ${adapter.noun}?`,
        text: confirm && confirm.kind === 'delete' ? (confirm.override
          ? `Delete your local “${confirm.key}”? Its file is removed and the built-in “${confirm.key}” ${adapter.noun} is used again.`
          : `Delete ${adapter.noun} “${confirm.key}”? This removes its file and cannot be undone.`) : '',
        confirmLabel: confirm && confirm.override ? 'Delete override' : 'Delete', danger: true, onCancel: () => setConfirm(null), onConfirm: remove}),
      doc && doc.compare ? h(Dialog, {open: true, wide: true, title: `${doc.key} changed on disk`, onClose: () => resolveCompare('cancel'),
        footer: [
          h(Button, {key: 'reload', onClick: () => resolveCompare('reload')}, 'Reload'),
          h(Button, {key: 'merge', onClick: () => resolveCompare('merge')}, 'Merge'),
          h(Button, {key: 'overwrite', variant: 'danger', onClick: () => resolveCompare('overwrite')}, 'Overwrite')]},
      h('p', {className: 'iiid-muted'}, 'The file changed on disk after you opened it. Left: the file on disk. Right: your draft. Reload takes the disk version, Merge combines both, Overwrite saves your draft over it.'),
      h(DiffView, {left: doc.compare.disk, right: doc.draft, leftCaption: `disk/${doc.key}`, rightCaption: `yours/${doc.key}`, narrow})) : null);
  }

  return {EntryBrowser, AgentForm, Picker};
}

// ============================================================================ Kits (§4.5–§4.8)

/** A count from a list, an object keyed by name, or a number. */
function countOf(value) {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'number') return value;
  return value && typeof value === 'object' ? Object.keys(value).length : 0;
}

function kitInitials(kit) {
  const name = String(kit || '').split('/').pop() || '?';
  const parts = name.split(/[-_.]/).filter(Boolean);
  return (parts.length > 1 ? parts[0][0] + parts[1][0] : name.slice(0, 2)).toUpperCase();
}

function planRowText(summary) {
  if (summary.kind === 'update') return `Update ${summary.from} → ${summary.to}`;
  if (summary.kind === 'remove') return `Remove ${summary.from}`;
  return `Install ${summary.to}`;
}

function pendingBanner(summary) {
  const warnings = summary.warnings ? ` · ${plural(summary.warnings, 'warning')}` : '';
  if (summary.kind === 'update') return [`An update is waiting for review: `, `${summary.kit} ${summary.from} → ${summary.to}`, warnings];
  if (summary.kind === 'remove') return [`A removal is waiting for review: `, `${summary.kit} ${summary.from}`, warnings];
  return [`An install is waiting for review: `, `${summary.kit} ${summary.to}`, warnings];
}

/** Text with `backticks` rendered as code elements (plan messages, review texts). */
export function withCode(h, text) {
  return String(text || '').split('`').map((part, i) => (i % 2 ? h('code', {key: i}, part) : part));
}

function createKits(ui) {
  const {h, React, host, Button, TextInput, Markdown, Choice, Tabs, Chip, Alert, Skeleton, Confirm, Icon, CodeLine, CopyButton, DiffDialog,
    ErrorNote, useSubscription, useCoalesced, call} = ui;
  const {useState, useEffect, useRef, useCallback} = React;

  const KitMark = ({kit}) => h('span', {className: 'iiid-kitmark', 'aria-hidden': 'true'}, kitInitials(kit));

  function KitsSidebar({data, error, loading, onRoute, route, checking, onCheck, checkError, reload}) {
    const kits = (data && data.kits) || [];
    const pending = (data && data.pending) || [];
    return h('aside', {className: 'iiid-sidebar iiid-kits__side'},
      h('div', {className: 'iiid-sidebar__tools'},
        h(Button, {variant: 'primary', label: 'install a kit', onClick: () => onRoute({name: 'install'})}, h(Icon, {name: 'plus', size: 14}), ' Install a kit'),
        h(Button, {onClick: onCheck, disabled: checking}, checking ? 'Checking…' : 'Updates')),
      checkError ? h(Alert, null, checkError) : null,
      loading && !data ? h(Skeleton, null)
        : error && !data ? h(Alert, {title: 'Kits could not be loaded.'}, h(Button, {onClick: reload}, 'Retry'))
          : [
            h('div', {key: 'count', className: 'iiid-count'}, `${kits.length} installed · ${pending.length} to review`),
            pending.length ? h('section', {key: 'pending', className: 'iiid-group', 'aria-label': 'Needs review'},
              h('h3', {className: 'iiid-group__title'}, 'Needs review'),
              h('ul', {className: 'iiid-list'}, pending.map((p) => h('li', {key: p.plan_id, className: `iiid-row${route.name === 'plan' && route.planId === p.plan_id ? ' is-active' : ''}`},
                h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => onRoute({name: 'plan', planId: p.plan_id})},
                  h('span', {className: 'iiid-row__glyph', 'aria-hidden': 'true'}, p.kind === 'remove' ? '−' : (p.kind === 'update' ? '↑' : '+')),
                  h('span', {className: 'iiid-row__main'},
                    h('span', {className: 'iiid-row__title'}, p.kit),
                    h('span', {className: 'iiid-row__meta'}, planRowText(p)),
                    h('span', {className: 'iiid-row__chips'},
                      p.blocking > 0 ? h(Chip, {tone: 'alert'}, 'blocked') : null,
                      p.counts && p.counts.conflicts > 0 ? h(Chip, {tone: 'alert'}, plural(p.counts.conflicts, 'conflict')) : null,
                      p.warnings > 0 ? h(Chip, {tone: 'warn'}, plural(p.warnings, 'warning')) : null))))))) : null,
            h('section', {key: 'installed', className: 'iiid-group', 'aria-label': 'Installed'},
              h('h3', {className: 'iiid-group__title'}, 'Installed'),
              kits.length ? h('ul', {className: 'iiid-list'}, kits.map((k) => h('li', {key: k.kit, className: `iiid-row${route.name === 'kit' && route.kit === k.kit ? ' is-active' : ''}`},
                h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => onRoute({name: 'kit', kit: k.kit})},
                  h(KitMark, {kit: k.kit}),
                  h('span', {className: 'iiid-row__main'},
                    h('span', {className: 'iiid-row__title'}, k.kit, ' ', h('span', {className: 'iiid-muted'}, k.version)),
                    h('span', {className: 'iiid-row__chips'},
                      k.update && k.update.available ? h(Chip, {tone: 'accent'}, `↑ ${k.update.available}`) : null,
                      k.files && k.files.edited > 0 ? h(Chip, {tone: 'warn'}, `${k.files.edited} edited`) : null)))))) : h('p', {className: 'iiid-empty'}, 'No kits yet.')),
          ]);
  }


  function Overview({data, loadError, loading, reload, route, onRoute, checking, onCheck, openUpdate, busyKit, notice, setNotice}) {
    const [text, setText] = useState('');
    const [busy, setBusy] = useState(false);
    const [error, setError] = useState('');
    const inputRef = useRef(null);
    const installing = route.name === 'install';
    useEffect(() => { if (installing && inputRef.current) inputRef.current.focus(); }, [installing]);
    const valid = isKitReference(text);
    const submit = async (e) => {
      if (e) e.preventDefault();
      if (!valid || busy) return;
      setBusy(true);
      setError('');
      try {
        const res = await call('directory::download-kit', {kit: text.trim()}, TIMEOUT_2_MIN);
        if (res && res.plan) onRoute({name: 'plan', planId: res.plan.plan_id});
        else setNotice(res && res.message ? res.message : 'Nothing to install.');
      } catch (err) {
        setError(cleanError(err));
      } finally {
        setBusy(false);
      }
    };
    const kits = (data && data.kits) || [];
    const pending = (data && data.pending) || [];
    const reference = valid ? text.trim() : '<author>/<kit>';
    return h('div', {className: 'iiid-kits__home'},
      h('div', {className: 'iiid-pagehead'},
        h('h2', {className: 'iiid-h2'}, 'Kits'),
        h(Button, {onClick: onCheck, disabled: checking}, checking ? 'Checking…' : 'Check for updates')),
      h('p', {className: 'iiid-muted'}, 'Installs and updates are reviewed here before anything is written.'),
      notice ? h(Alert, {tone: 'neutral', role: 'status'}, notice, ' ', h(Button, {variant: 'ghost', onClick: () => setNotice('')}, 'Dismiss')) : null,
      pending.map((p) => h('div', {key: p.plan_id, className: 'iiid-banner iiid-banner--accent', role: 'status'},
        h('span', null, ...pendingBanner(p).map((part, i) => (i === 1 ? h('code', {key: i}, part) : part))),
        h(Button, {onClick: () => onRoute({name: 'plan', planId: p.plan_id})}, 'Review'))),
      h('form', {className: 'iiid-installform', onSubmit: submit},
        h(TextInput, {value: text, onChange: setText, label: 'kit to install', placeholder: 'author/kit or author/kit@1.2.0', inputRef}),
        h(Button, {variant: 'primary', type: 'submit', disabled: !valid || busy, onClick: submit}, busy ? 'Planning…' : 'Review install'),
        installing ? h(Button, {onClick: () => onRoute({name: 'home'})}, 'Cancel') : null),
      h('p', {className: 'iiid-muted'}, 'Nothing is written until you review the plan.'),
      h(CodeLine, {text: `iii trigger directory::download-kit kit=${reference}`}),
      error ? h(ErrorNote, {error, context: {op: 'install'}, onAction: (action) => { if (action === 'retry') submit(); }}) : null,
      h('div', {className: 'iiid-pagehead'},
        h('h3', {className: 'iiid-h3'}, 'Installed'),
        data && data.updates_checked_at ? h('span', {className: 'iiid-muted'}, `checked ${formatAgo(data.updates_checked_at)}`) : null),
      data && data.updates_error ? h(Alert, {tone: 'warn'}, `Last update check failed: ${data.updates_error}`) : null,
      !data ? (loadError ? h(Alert, {title: 'Installed kits could not be loaded.'}, h('p', null, humanError(loadError, {op: 'list'}).sentence), h(Button, {onClick: reload}, 'Retry'),
        h('details', {className: 'iiid-errornote__details'}, h('summary', null, 'Details'), h('pre', {className: 'iiid-errornote__raw'}, loadError)))
        : h(Skeleton, {rows: 2}))
      : kits.length === 0 ? h('div', {className: 'iiid-emptycard'}, h('p', null, 'No kits installed'),
        h('p', {className: 'iiid-muted'}, 'Or from a terminal: ', h('code', null, 'iii trigger directory::download-kit kit=<author>/<kit>')))
        : h('div', {className: 'iiid-cards'}, kits.map((k) => {
          const status = kitStatus(k, pending);
          const files = k.files || {};
          const facts = [plural(files.agents || 0, 'profile'), plural(files.skills || 0, 'skill'), plural(countOf(k.workers), 'worker')].join(' · ');
          const extra = [files.edited > 0 ? `${plural(files.edited, 'file')} edited by you` : null, files.missing > 0 ? `${files.missing} missing` : null,
            files.skipped > 0 ? `${files.skipped} kept yours` : null].filter(Boolean);
          const pendingUpdate = status.plan;
          return h('div', {key: k.kit, className: 'iiid-kitcard'},
            h('button', {type: 'button', className: 'iiid-kitcard__main', 'aria-label': `${k.kit} ${k.version}`, onClick: () => onRoute({name: 'kit', kit: k.kit})},
              h(KitMark, {kit: k.kit}),
              h('span', {className: 'iiid-kitcard__text'},
                h('span', {className: 'iiid-kitcard__title'}, h('strong', null, k.kit), ' ', h('span', {className: 'iiid-kitcard__version'}, k.version)),
                status.text ? h('span', {className: `iiid-kitcard__status${status.update ? ' is-update' : ''}`}, status.text) : null,
                h('span', {className: 'iiid-muted'}, facts),
                extra.length ? h('span', {className: 'iiid-kitcard__extra'}, extra.join(' · ')) : null)),
            status.update ? h(Button, {disabled: busyKit === k.kit, onClick: () => openUpdate(k.kit, pendingUpdate)},
              busyKit === k.kit ? 'Planning…' : (pendingUpdate ? 'Review update' : 'View update')) : null);
        })),
      data ? h('p', {className: 'iiid-footer-line'}, `kits.lock · ${data.lock_path}`) : null);
  }

  const FILE_STATE_WORD = {intact: 'intact', edited: 'edited', missing: 'missing', skipped: 'kept yours'};
  const STATE_TONE = {intact: 'ok', edited: 'warn', missing: 'alert', skipped: 'neutral'};

  function KitDetail({kit, onRoute, openUpdate, busyKit, onEdit, narrow}) {
    const [state, setState] = useState({status: 'loading'});
    const [tab, setTab] = useState('overview');
    const [selected, setSelected] = useState(null);
    const [preview, setPreview] = useState(null);
    const [diff, setDiff] = useState(null);
    const [removing, setRemoving] = useState(false);
    const [actionError, setActionError] = useState('');
    const token = useRef(0);
    const load = useCallback(() => {
      const mine = ++token.current;
      call('directory::kits::get', {kit, registry: true}, TIMEOUT_2_MIN).then((res) => { if (token.current === mine) setState({status: 'ready', data: res}); },
        (err) => { if (token.current === mine) setState({status: 'error', error: cleanError(err)}); });
    }, [kit]);
    useEffect(() => { setState({status: 'loading'}); setSelected(null); setPreview(null); load(); }, [load]);
    const schedule = useCoalesced(load, 250);
    useSubscription('directory::kits::on-change', 'kits-on-change', `detail-${kit}`, (payload) => {
      const event = payload || {op: 'updates'};
      if (event.op === 'progress') return;
      if (event.kit === kit || event.op === 'updates') schedule();
    });
    const openFile = (file) => {
      setSelected(file.path);
      if (file.state === 'missing') { setPreview({path: file.path, missing: true}); return; }
      setPreview({path: file.path, loading: true});
      const fn = file.kind === 'agent' ? 'directory::agents::get' : 'directory::skills::get';
      call(fn, {id: file.id, raw: true}).then((res) => setPreview({path: file.path, text: typeof res.raw === 'string' ? res.raw : (res.body ?? res.system_prompt ?? '')}),
        (err) => setPreview({path: file.path, error: cleanError(err)}));
    };
    const viewChanges = (file) => {
      setDiff({path: file.path, loading: true});
      call('directory::kits::diff', {kit, path: file.path}, TIMEOUT_2_MIN).then((res) => setDiff({path: file.path, base: res.base, local: res.local}),
        (err) => setDiff({path: file.path, error: cleanError(err)}));
    };
    const removeKit = async () => {
      setRemoving(true);
      setActionError('');
      try {
        const res = await call('directory::kits::remove', {kit}, TIMEOUT_2_MIN);
        if (res && res.plan) onRoute({name: 'plan', planId: res.plan.plan_id});
        else setActionError(res && res.message ? res.message : 'Nothing to remove.');
      } catch (err) {
        setActionError(cleanError(err));
      } finally {
        setRemoving(false);
      }
    };
    const back = h(Button, {variant: 'ghost', label: 'Kits', onClick: () => onRoute({name: 'home'})}, h(Icon, {name: 'back'}), ' Kits');
    if (state.status === 'loading') return h('div', {className: 'iiid-kitdetail'}, back, h(Skeleton, {rows: 6}));
    if (state.status === 'error') {
      return h('div', {className: 'iiid-kitdetail'}, back, h(Alert, {title: 'This kit could not be loaded.'}, h('p', null, state.error),
        h(Button, {onClick: () => onRoute({name: 'home'})}, 'Back to kits')));
    }
    const d = state.data;
    const detail = d.detail || {};
    const files = d.file_list || [];
    const profiles = files.filter((f) => f.kind === 'agent');
    const skills = files.filter((f) => f.kind !== 'agent');
    const workers = d.worker_status || [];
    const changed = files.filter((f) => f.state === 'edited' || f.state === 'missing').length;
    const author = detail.author || {};
    const update = d.update && d.update.available ? d.update : null;
    const tabs = [
      {id: 'overview', label: 'Overview'},
      {id: 'profiles', label: `Profiles (${profiles.length})`},
      {id: 'skills', label: `Skills (${skills.length})`},
      {id: 'workers', label: `Workers (${workers.length})`},
      {id: 'files', label: changed ? `Files · ${changed} changed` : 'Files'},
    ];
    const fileList = (list) => h('div', {className: 'iiid-twopane'},
      h('ul', {className: 'iiid-list'}, list.map((f) => h('li', {key: f.path, className: `iiid-row${selected === f.path ? ' is-active' : ''}`},
        h('button', {type: 'button', className: 'iiid-row__btn', onClick: () => openFile(f)},
          h('span', {className: 'iiid-row__main'}, h('span', {className: 'iiid-row__title'}, f.id), h('span', {className: 'iiid-row__id'}, f.path)),
          h(Chip, {tone: STATE_TONE[f.state] || 'neutral'}, FILE_STATE_WORD[f.state] || f.state))))),
      preview && list.some((f) => f.path === preview.path) ? h('div', {className: 'iiid-preview'},
        preview.missing ? h(Alert, {tone: 'warn', role: 'status'}, 'This file was deleted here. The next update restores it unless you choose to keep it deleted.')
          : preview.loading ? h(Skeleton, null) : preview.error ? h(Alert, null, preview.error)
            : [h('pre', {key: 'p', className: 'iiid-source'}, preview.text),
              h(Button, {key: 'e', onClick: () => { const f = files.find((x) => x.path === preview.path); onEdit(f.kind === 'agent' ? 'agents' : 'skills', f.id); }}, 'Edit in Directory')]) : null);
    let body;
    if (tab === 'overview') body = d.readme ? h(Markdown, {content: d.readme}) : h('p', {className: 'iiid-muted'}, 'This kit has no README.');
    else if (tab === 'profiles') body = fileList(profiles);
    else if (tab === 'skills') body = fileList(skills);
    else if (tab === 'workers') {
      body = h('ul', {className: 'iiid-list iiid-list--plain'}, workers.map((w) => h('li', {key: w.name, className: 'iiid-worker'},
        h('strong', null, w.name), ' ', h('code', null, w.range), ' ',
        h('span', {className: 'iiid-muted'}, w.installed ? `installed ${w.installed}` : 'not installed'),
        w.declared ? h('span', {className: 'iiid-muted'}, ` · declared ${w.declared}`) : null,
        w.path ? h(Chip, null, 'local path') : null,
        w.satisfied === true ? h(Chip, {tone: 'ok'}, 'ok') : (w.satisfied === false ? h(Chip, {tone: 'alert'}, 'outside the range') : null),
        w.registry_url ? h('a', {href: w.registry_url, target: '_blank', rel: 'noopener noreferrer', className: 'iiid-link'}, 'registry') : null)));
    } else {
      body = h('ul', {className: 'iiid-list iiid-list--plain'}, files.map((f) => h('li', {key: f.path, className: 'iiid-filerow'},
        h('code', null, f.path), h(Chip, {tone: STATE_TONE[f.state] || 'neutral'}, FILE_STATE_WORD[f.state] || f.state),
        f.state === 'edited' ? h(Button, {onClick: () => viewChanges(f)}, 'View my changes') : null)));
    }
    return h('div', {className: 'iiid-kitdetail'},
      back,
      h('div', {className: 'iiid-pagehead'},
        h(KitMark, {kit}),
        h('h2', {className: 'iiid-h2'}, `${d.kit} ${d.version}`),
        h('span', {className: 'iiid-spacer'}),
        update ? h(Button, {variant: 'primary', disabled: busyKit === kit, onClick: () => openUpdate(kit)}, `Review update ${update.available}`) : null),
      h('div', {className: 'iiid-meta'},
        author.handle || author.name ? h('span', null, `by ${author.name || author.handle}`, author.verified ? h('span', {className: 'iiid-verified', role: 'img', 'aria-label': 'verified'}, ' ✓') : null) : null,
        detail.license ? h('span', null, detail.license) : null,
        h('span', null, `installed ${formatAgo(d.installed_at)} · asked for ${d.requested}`),
        update && update.major ? h(Chip, {tone: 'alert'}, 'major update') : null,
        d.update && d.update.ignored ? h(Chip, null, `ignoring ${d.update.ignored}`) : null),
      detail.description ? h('p', null, detail.description) : null,
      h(Tabs, {label: 'Kit sections', tabs, value: tab, onChange: setTab}),
      h('div', {className: 'iiid-tabpanel', role: 'tabpanel'}, body),
      actionError ? h(Alert, null, actionError) : null,
      h('div', {className: 'iiid-footer'},
        h(Button, {variant: 'danger', disabled: removing, onClick: removeKit}, removing ? 'Planning…' : 'Remove kit'),
        h('span', {className: 'iiid-muted'}, `${plural(profiles.length, 'profile')} · ${plural(skills.length, 'skill')} · ${plural(workers.length, 'worker')}`),
        d.registry_url ? h('a', {href: d.registry_url, target: '_blank', rel: 'noopener noreferrer', className: 'iiid-link'}, 'Open in registry') : null),
      h(DiffDialog, {open: !!diff, onClose: () => setDiff(null), title: diff ? diff.path : '', narrow,
        note: diff && diff.error ? diff.error : [`Left: what the kit installed. Right: the file on disk.`,
          diff && diff.base == null && !diff.loading ? ' The installed version is not available.' : '',
          diff && diff.local == null && !diff.loading ? ' The file is missing on disk.' : ''].join(''),
        left: diff ? diff.base ?? '' : '', right: diff ? diff.local ?? '' : '',
        leftCaption: diff ? `kit/${diff.path}` : '', rightCaption: diff ? `disk/${diff.path}` : ''}));
  }

  /** The plan route: loads the plan with contents and the review module, with fallbacks (§4.8). */
  function PlanRoute({planId, onRoute, onOpenAgent, notice, plansState, narrow, refreshList}) {
    const [plan, setPlan] = useState({status: 'loading'});
    const [review, setReview] = useState({status: 'loading'});
    const [discarding, setDiscarding] = useState(false);
    const moduleAttempt = useRef(0);
    const loadPlan = useCallback(() => {
      setPlan({status: 'loading'});
      call('directory::kits::plan', {plan_id: planId, contents: true}, TIMEOUT_2_MIN)
        .then((res) => setPlan({status: 'ready', data: res}), (err) => setPlan({status: 'error', error: cleanError(err)}));
    }, [planId]);
    const loadModule = useCallback(() => {
      if (typeof host.importModule !== 'function') { setReview({status: 'unsupported'}); return; }
      setReview({status: 'loading'});
      const attempt = (n) => {
        host.importModule('iii-directory/module.js').then((mod) => {
          if (!mod || mod.MODULE_API !== MODULE_API || typeof mod.createKitsReview !== 'function') {
            setReview({status: 'error', error: `module.js has MODULE_API ${mod && mod.MODULE_API}, expected ${MODULE_API}`});
            return;
          }
          setReview({status: 'ready', api: mod.createKitsReview({React, host, rules: RULES, ui})});
        }, (err) => {
          if (n < 3) setTimeout(() => attempt(n + 1), 1000);
          else setReview({status: 'error', error: cleanError(err)});
        });
      };
      moduleAttempt.current += 1;
      attempt(1);
    }, []);
    useEffect(() => { loadPlan(); }, [loadPlan]);
    useEffect(() => { loadModule(); }, [loadModule, planId]);
    const back = h(Button, {variant: 'ghost', label: 'Kits', onClick: () => onRoute({name: 'home'})}, h(Icon, {name: 'back'}), ' Kits');
    if (plan.status === 'loading') return h('div', {className: 'iiid-plan'}, back, h(Skeleton, {rows: 8}));
    if (plan.status === 'error') {
      return h('div', {className: 'iiid-plan'}, back, h(Alert, {tone: 'warn', title: 'This plan is no longer available.'},
        h('p', null, plan.error), h(Button, {onClick: () => onRoute({name: 'home'})}, 'Back to kits')));
    }
    const record = plan.data;
    const p = record.plan;
    const discard = async () => {
      setDiscarding(false);
      try { await call('directory::kits::discard', {plan_id: p.plan_id}); } catch { /* errors are ignored */ }
      refreshList();
      onRoute({name: 'home'});
    };
    if (review.status === 'unsupported') {
      return h('div', {className: 'iiid-plan'}, back,
        h(Alert, {tone: 'warn', role: 'status'}, 'This console predates lazy modules, so the review cannot open here.'),
        h('h2', {className: 'iiid-h2'}, planTitle(p)),
        h('p', {className: 'iiid-muted'}, planSummary(p).counts),
        (p.warnings || []).length ? h('ul', {className: 'iiid-list--plain'}, p.warnings.map((w, i) => h('li', {key: i}, w.message))) : null,
        h('p', {className: 'iiid-review-text'}, withCode(h, p.review)), h(CopyButton, {text: p.review || ''}),
        h(CodeLine, {text: `iii trigger directory::kits::apply plan_id=${p.plan_id}`}),
        h('div', {className: 'iiid-footer'}, h(Button, {onClick: () => setDiscarding(true)}, 'Discard plan'), h(Button, {onClick: () => onRoute({name: 'home'})}, 'Back to kits')),
        h(Confirm, {open: discarding, title: 'Discard this plan?', text: 'Nothing was written; you can plan it again any time.', confirmLabel: 'Discard', danger: true,
          onCancel: () => setDiscarding(false), onConfirm: discard}));
    }
    if (review.status === 'error') {
      return h('div', {className: 'iiid-plan'}, back, h(Alert, {title: 'The kit review could not be loaded.'}, h('p', null, review.error),
        h(Button, {onClick: loadModule}, 'Try again')));
    }
    if (review.status === 'loading') return h('div', {className: 'iiid-plan'}, back, h(Skeleton, {rows: 8}));
    const {PlanScreen} = review.api;
    return h(PlanScreen, {key: p.plan_id, record, notice, onRoute, onOpenAgent, plansState, narrow, refreshList,
      onDiscarded: () => { refreshList(); onRoute({name: 'home'}); }});
  }

  /** The Kits collection: sidebar + workspace routes (§4.5). */
  function KitsView({visible, narrow, request, onOpenAgent, onEdit}) {
    const [route, setRouteState] = useState({name: 'home'});
    const [data, setData] = useState(null);
    const [error, setError] = useState('');
    const [loading, setLoading] = useState(true);
    const [checking, setChecking] = useState(false);
    const [checkError, setCheckError] = useState('');
    const [busyKit, setBusyKit] = useState(null);
    const [notice, setNotice] = useState('');
    const [planNotice, setPlanNotice] = useState(null);
    const plansState = useRef({});
    const reload = useCallback(() => {
      setLoading(true);
      return call('directory::kits::list', {}).then((res) => { setData(res); setError(''); setLoading(false); },
        (err) => { setError(cleanError(err)); setLoading(false); });
    }, []);
    const wasVisible = useRef(false);
    useEffect(() => { if (visible && !wasVisible.current) reload(); wasVisible.current = visible; }, [visible]);
    const schedule = useCoalesced(reload, 250);
    useSubscription('directory::kits::on-change', 'kits-on-change', 'kits-view', (payload) => {
      if ((payload || {op: 'updates'}).op !== 'progress') schedule();
    });
    const onRoute = (next, options) => {
      setPlanNotice(options && options.notice && next.name === 'plan' ? {planId: next.planId, text: options.notice} : null);
      if (options && options.notice && next.name === 'home') setNotice(options.notice);
      setRouteState(next);
      reload();  // every route change follows an action (a plan made, applied, discarded, ignored) or a return home
    };
    useEffect(() => { if (request && request.route) onRoute(request.route); }, [request && request.id]);
    const check = async () => {
      setChecking(true);
      setCheckError('');
      try { await call('directory::kits::check-updates', {}, TIMEOUT_2_MIN); } catch (err) { setCheckError(cleanError(err)); }
      setChecking(false);
      reload();
    };
    const openUpdate = async (kit, pendingUpdate) => {
      const existing = pendingUpdate || ((data && data.pending) || []).find((p) => p.kit === kit && p.kind === 'update');
      if (existing) { onRoute({name: 'plan', planId: existing.plan_id}); return; }
      setBusyKit(kit);
      try {
        const res = await call('directory::kits::plan-update', {kit}, TIMEOUT_2_MIN);
        if (res && res.plan) onRoute({name: 'plan', planId: res.plan.plan_id});
        else { setNotice(res && res.message ? res.message : 'No update to review.'); onRoute({name: 'home'}); }
      } catch (err) {
        setNotice(cleanError(err));
      } finally {
        setBusyKit(null);
      }
    };
    const sideVisible = !narrow || route.name === 'home';
    const workVisible = !narrow || route.name !== 'home';
    let work;
    if (route.name === 'kit') work = h(KitDetail, {key: route.kit, kit: route.kit, onRoute, openUpdate, busyKit, onEdit, narrow});
    else if (route.name === 'plan') {
      work = h(PlanRoute, {key: route.planId, planId: route.planId, onRoute, onOpenAgent, plansState: plansState.current, narrow,
        notice: planNotice && planNotice.planId === route.planId ? planNotice.text : null, refreshList: reload});
    } else work = h(Overview, {data, loadError: error, loading, reload, route, onRoute, checking, onCheck: check, openUpdate, busyKit, notice, setNotice});
    return h('section', {className: 'iiid-browser iiid-kits', hidden: !visible, 'aria-label': 'Kits'},
      sideVisible ? h(KitsSidebar, {data, error, loading, onRoute, route, checking, onCheck: check, checkError, reload}) : null,
      workVisible ? h('section', {className: 'iiid-doc iiid-kits__work'},
        narrow && route.name !== 'home' && route.name !== 'kit' && route.name !== 'plan'
          ? h(Button, {variant: 'ghost', label: 'Kits', onClick: () => onRoute({name: 'home'})}, h(Icon, {name: 'back'}), ' Kits') : null,
        work) : null);
  }

  return {KitsView};
}

// ============================================================================ page shell (§4.2)

function createShell(ui, browsers, kits) {
  const {h, React, host, Button, Choice, Icon, useSubscription, useCoalesced, call} = ui;
  const {useState, useEffect, useRef, useCallback} = React;
  const {EntryBrowser} = browsers;
  const {KitsView} = kits;

  function DirectoryPage(props) {
    const pane = props.paneId || props.tabId || 'default';
    const [collection, setCollectionState] = useState(() => {
      const stored = storageGet(`collection:${pane}`, 'skills');
      return COLLECTIONS.includes(stored) ? stored : 'skills';
    });
    const [mounted, setMounted] = useState(() => new Set([collection]));
    const [attention, setAttention] = useState(0);
    const [narrow, setNarrow] = useState(false);
    const [phone, setPhone] = useState(false);
    const [requests, setRequests] = useState({});
    const [dirty, setDirtyMap] = useState({});
    const [pendingLink, setPendingLink] = useState(null);
    const rootRef = useRef(null);
    const applied = useRef(new Set());
    const counter = useRef(0);

    const setCollection = (next) => {
      setCollectionState(next);
      setMounted((m) => (m.has(next) ? m : new Set([...m, next])));
      storageSet(`collection:${pane}`, next);
    };

    const [kitOwners, setKitOwners] = useState(() => new Map());
    const loadBadge = useCallback(() => call('directory::kits::list', {}).then((res) => {
      setAttention(Number(res && res.attention) || 0);
      const names = ((res && res.kits) || []).map((k) => k.kit).filter((k) => typeof k === 'string').sort();
      return Promise.all(names.map((kit) => call('directory::kits::get', {kit}).catch(() => null))).then((details) => {
        const owners = skillOwners(details);
        const same = (a, b) => a.size === b.size && [...a].every(([id, kit]) => b.get(id) === kit);
        setKitOwners((was) => (same(was, owners) ? was : owners));
      });
    }, () => {}), []);
    useEffect(() => { loadBadge(); }, [loadBadge]);
    const scheduleBadge = useCoalesced(loadBadge, 250);
    useSubscription('directory::kits::on-change', 'kits-on-change', 'badge', (payload) => {
      if ((payload || {op: 'updates'}).op !== 'progress') scheduleBadge();
    });

    // Container width decides the layout (ResizeObserver; zero widths of hidden panes ignored).
    useEffect(() => {
      const node = rootRef.current;
      if (!node || typeof globalThis.ResizeObserver !== 'function') return undefined;
      const observer = new globalThis.ResizeObserver((entries) => {
        const width = entries[0] && entries[0].contentRect ? entries[0].contentRect.width : node.clientWidth;
        if (width > 0) { setNarrow(width < 850); setPhone(width < 520); }
      });
      observer.observe(node);
      return () => observer.disconnect();
    }, []);

    // The engine connection, from the console's connection-state listener when it has one.
    const [connection, setConnection] = useState('connected');
    useEffect(() => {
      const iii = host && host.iii;
      if (!iii || typeof iii.addConnectionStateListener !== 'function') return undefined;
      let off = null;
      try { off = iii.addConnectionStateListener((state) => setConnection(typeof state === 'string' ? state : 'connected')); } catch { return undefined; }
      return () => { try { if (typeof off === 'function') off(); } catch { /* already gone */ } };
    }, []);

    const anyDirty = Object.values(dirty).some(Boolean);
    useEffect(() => { if (typeof props.setDirty === 'function') props.setDirty(anyDirty); }, [anyDirty]);

    const navigate = useCallback((target) => {
      counter.current += 1;
      const id = counter.current;
      setCollection(target.collection);
      if (target.collection === 'kits') setRequests((r) => ({...r, kits: {id, route: target.route}}));
      else setRequests((r) => ({...r, [target.collection]: {id, key: target.key, action: target.action}}));
    }, []);

    // Deep links: each panelContext id is applied once per page instance.
    useEffect(() => {
      const ctx = props.panelContext;
      if (!ctx || applied.current.has(ctx.id)) return;
      applied.current.add(ctx.id);
      const target = routeFromContext(ctx.context);
      if (target) navigate(target);
    }, [props.panelContext && props.panelContext.id]);

    const onDirty = (name) => (value) => setDirtyMap((d) => (d[name] === value ? d : {...d, [name]: value}));
    const badge = attentionBadge(attention);
    const options = [
      {value: 'skills', label: 'Skills', ariaLabel: 'Skills', title: 'Skills', content: [h(Icon, {key: 'i', name: 'book'}), h('span', {key: 't', className: 'iiid-choice__text'}, 'Skills')]},
      {value: 'agents', label: 'Agent Profiles', ariaLabel: 'Agent Profiles', title: 'Agent Profiles', content: [h(Icon, {key: 'i', name: 'person'}), h('span', {key: 't', className: 'iiid-choice__text'}, 'Agent Profiles')]},
      {value: 'kits', label: 'Kits', ariaLabel: 'Kits', title: badge ? `Kits · ${attention} need attention` : 'Kits',
        content: [h(Icon, {key: 'i', name: 'puzzle'}), h('span', {key: 't', className: 'iiid-choice__text'}, 'Kits'), badge ? h('span', {key: 'b', className: 'iiid-badge', 'aria-hidden': 'true'}, badge) : null]},
    ];
    return h('div', {className: `iiid-page${narrow ? ' iiid-narrow' : ''}${phone ? ' iiid-phone' : ''}`, ref: rootRef, 'data-iii-directory-version': PAGE_VERSION},
      h('header', {className: 'iiid-header'},
        h(Icon, {name: 'file', size: 18}),
        h('div', {className: 'iiid-header__text'},
          h('h1', {className: 'iiid-title'}, 'Directory'),
          h('p', {className: 'iiid-subtitle'}, 'Filesystem-backed skills, agent profiles and kits')),
        h('span', {className: 'iiid-spacer'}),
        typeof props.onRequestClose === 'function' ? h('button', {type: 'button', className: 'iiid-iconbtn', 'aria-label': 'Close', onClick: props.onRequestClose}, h(Icon, {name: 'close'})) : null),
      connection === 'connected' ? h(WorkerBanner) : null,
      connection !== 'connected' ? h('div', {className: 'iiid-banner iiid-banner--warn iiid-connection', role: 'status'},
        connection === 'connecting' ? 'Reconnecting to the engine…' : 'Not connected to the engine. Your drafts are kept in this browser; saving works again once the connection is back.') : null,
      h('nav', {className: 'iiid-switcher'}, h(Choice, {label: 'Browse skills, agent profiles or kits', value: collection, onChange: setCollection, options})),
      h('div', {className: 'iiid-body'},
        mounted.has('skills') ? h(EntryBrowser, {adapter: ADAPTERS.skills, visible: collection === 'skills', narrow, pane, request: requests.skills, onDirty: onDirty('skills'), kits: kitOwners}) : null,
        mounted.has('agents') ? h(EntryBrowser, {adapter: ADAPTERS.agents, visible: collection === 'agents', narrow, pane, request: requests.agents, onDirty: onDirty('agents'), kits: kitOwners}) : null,
        mounted.has('kits') ? h(KitsView, {visible: collection === 'kits', narrow, request: requests.kits,
          onOpenAgent: (key) => navigate({collection: 'agents', key}), onEdit: (coll, key) => navigate({collection: coll, key})}) : null),
      pendingLink ? null : null);
  }

  /** One banner while the worker cannot be reached: what happened, when the page retries, Retry now. */
  function WorkerBanner() {
    const state = ui.useReachability();
    const [, tick] = useState(0);
    useEffect(() => {
      if (!state.down) return undefined;
      const timer = setInterval(() => tick((n) => n + 1), 1000);
      return () => clearInterval(timer);
    }, [state.down]);
    if (!state.down) return null;
    const seconds = Math.max(0, Math.ceil((state.nextAt - Date.now()) / 1000));
    return h('div', {className: 'iiid-banner iiid-banner--warn iiid-banner--row iiid-connection', role: 'status'},
      h('span', null, `The iii-directory worker is not reachable. Open documents are read-only and drafts stay in this browser; retrying ${seconds ? `in ${seconds} s` : 'now'}…`),
      h(Button, {onClick: () => ui.reach.retry()}, 'Retry now'));
  }

  return {DirectoryPage};
}

// ============================================================================ chat cards (§4.15)

/** Read the chat's record of one function call defensively. */
export function readMessage(msg) {
  const m = msg || {};
  const functionId = m.functionId ?? m.function_id;
  const input = m.input ?? m.arguments ?? m.args ?? {};
  let output = m.output ?? m.result;
  if (output && typeof output === 'object' && Array.isArray(output.content) && 'details' in output) output = output.details;
  return {functionId, input: input && typeof input === 'object' ? input : {}, output};
}

function createCards(ui) {
  const {h, React, host, Button, Chip, Alert, StepList, Markdown, useSubscription, call} = ui;
  const {useState, useEffect} = React;
  const canPanels = () => !!(host.panels && typeof host.panels.open === 'function');
  const openPanel = (context) => host.panels.open({pageId: 'directory', context});

  function PlanCard({plan, decisions, compact}) {
    const s = planSummary(plan, decisions);
    const [applying, setApplying] = useState(null);
    const reviewLabel = plan.kind === 'update' ? 'Review update' : (plan.kind === 'remove' ? 'Review removal' : 'Review install');
    const defaultsLabel = plan.kind === 'update' ? 'Update with these defaults' : (plan.kind === 'remove' ? 'Remove with these defaults' : 'Install with these defaults');
    const applyDefaults = () => {
      setApplying({status: 'running'});
      call('directory::kits::apply', {plan_id: plan.plan_id, decisions: {}}, TIMEOUT_20_MIN)
        .then((res) => setApplying({status: 'done', message: res.message}), (err) => setApplying({status: 'failed', error: cleanError(err)}));
    };
    let action = null;
    if (!compact && canPanels()) action = h(Button, {variant: 'primary', onClick: () => openPanel({collection: 'kits', plan_id: plan.plan_id})}, reviewLabel);
    else if (!compact) {
      action = !s.blocking.length && !((plan.counts || {}).decisions_required > 0)
        ? (applying ? h('p', {role: applying.status === 'failed' ? 'alert' : 'status'}, applying.status === 'running' ? 'Applying…' : (applying.message || applying.error))
          : h(Button, {variant: 'primary', onClick: applyDefaults}, defaultsLabel))
        : h('p', {className: 'iiid-muted'}, plan.review);
    }
    return h('div', {className: 'iiid-card'},
      h('div', {className: 'iiid-card__title'}, s.title, ' ', s.badges.map((b) => h(Chip, {key: b, tone: b === 'blocked' || b === 'major' ? 'alert' : 'warn'}, b))),
      h('div', {className: 'iiid-muted'}, s.counts),
      s.blocking.map((m, i) => h(Alert, {key: `b${i}`}, m)),
      s.replaced.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, `existing files replaced · ${s.replaced.length}`),
        s.replaced.map((r) => h('div', {key: r.path}, h('code', null, r.path), ' ', h(Chip, {tone: r.kept ? 'neutral' : 'warn'}, r.kept ? 'kept' : 'replaced')))) : null,
      s.conflicts.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, `conflicts · ${s.conflicts.length}`),
        s.conflicts.map((p) => h('div', {key: p}, h('code', null, p)))) : null,
      s.permissions ? h('div', {className: 'iiid-card__section'}, h('span', {className: 'iiid-card__label'}, 'permissions'), ' ', s.permissions) : null,
      s.also.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, 'also'), s.also.map((m, i) => h('div', {key: i}, m))) : null,
      action);
  }

  function ApplyRunning({planId}) {
    const [steps, setSteps] = useState(null);
    useSubscription('directory::kits::on-change', 'kits-on-change', `card-${planId}`, (payload) => {
      const next = stepsFromEvent(payload, planId);
      if (next) setSteps(next);
    }, !!planId);
    return h('div', {className: 'iiid-card'}, steps ? h(StepList, {steps}) : h('p', {className: 'iiid-muted'}, 're-checking the plan…'));
  }

  function ApprovalPreview({input}) {
    const [state, setState] = useState({status: 'loading'});
    useEffect(() => {
      call('directory::kits::plan', {plan_id: input.plan_id}, TIMEOUT_2_MIN).then((res) => setState({status: 'ready', plan: res.plan}),
        (err) => setState({status: 'error', error: cleanError(err)}));
    }, [input.plan_id]);
    if (state.status === 'loading') return h('div', {className: 'iiid-card'}, 'awaiting approval');
    if (state.status === 'error') return h('div', {className: 'iiid-card'}, h(Chip, null, 'awaiting approval'), h(Alert, null, state.error));
    return h('div', {className: 'iiid-card'}, h(Chip, {tone: 'warn'}, 'awaiting approval'),
      h(PlanCard, {plan: state.plan, decisions: input.decisions, compact: true}),
      canPanels() ? h(Button, {onClick: () => openPanel({collection: 'kits', plan_id: input.plan_id})}, 'Open the full review') : null,
      h('p', {className: 'iiid-muted'}, initialSteps(state.plan).map((s) => s.label).join(' → ')));
  }

  const openButton = (collection, key) => (canPanels() ? h(Button, {onClick: () => openPanel({collection, key})}, 'Open in Directory') : null);

  function renderDone(functionId, input, output) {
    const kitFn = ['directory::download-kit', 'directory::kits::plan-update', 'directory::kits::remove', 'directory::kits::apply'].includes(functionId);
    if (kitFn) {
      if (output.plan) return h(PlanCard, {plan: output.plan, decisions: input.decisions});
      if (functionId === 'directory::kits::apply' && output.status === 'applied' && output.report) {
        const r = output.report;
        const written = (r.files_written || []).length + (r.files_merged || []).length;
        return h('div', {className: 'iiid-card'},
          h('div', {className: 'iiid-card__title'}, output.message, ' ', h(Chip, {tone: 'ok'}, 'applied')),
          h('div', {className: 'iiid-muted'}, [`${written} written`, `${(r.files_removed || []).length} removed`, `${(r.files_kept || []).length} kept`,
            `${(r.workers_added || []).length + (r.workers_updated || []).length + (r.workers_removed || []).length} workers`].join(' · ')),
          (r.agents || []).length ? h('div', {className: 'iiid-card__section'}, h('span', {className: 'iiid-card__label'}, 'profiles from this kit'), ' ',
            r.agents.map((a) => (canPanels() ? h(Button, {key: a, variant: 'ghost', onClick: () => openPanel({collection: 'agents', key: a})}, a) : h(Chip, {key: a}, a)))) : null);
      }
      return h('div', {className: 'iiid-card'}, output.message || '');
    }
    if (functionId === 'directory::kits::check-updates') {
      const rows = (output.kits || []).filter((k) => k.available);
      if (!rows.length) return h('div', {className: 'iiid-card'}, 'Every installed kit is up to date.');
      return h('div', {className: 'iiid-card'}, rows.map((k) => h('div', {key: k.kit, className: 'iiid-card__row'}, `${k.kit} ${k.current} → ${k.available}`,
        k.major ? h(Chip, {tone: 'alert'}, 'major') : null, canPanels() ? h(Button, {onClick: () => openPanel({collection: 'kits', kit: k.kit})}, 'View') : null)));
    }
    if (functionId === 'directory::kits::list') {
      return h('div', {className: 'iiid-card'}, h('div', null, `${(output.kits || []).length} installed · ${(output.pending || []).length} to review`),
        (output.kits || []).map((k) => h('div', {key: k.kit}, `${k.kit} ${k.version}`, k.update && k.update.available ? ` ↑ ${k.update.available}` : '')));
    }
    const [, family, verb] = /^directory::([^:]+)::(.+)$/.exec(functionId) || [];
    if (family === 'skills') {
      if (verb === 'list') return h('div', {className: 'iiid-card'}, h('div', null, plural((output.skills || []).length, 'skill')),
        (output.skills || []).slice(0, 8).map((s) => h('div', {key: s.id}, h('code', null, s.id), ' ', s.title)));
      if (verb === 'get') return h('div', {className: 'iiid-card'}, h('strong', null, output.title || input.id), ' ', h('code', null, output.id || input.id),
        h('pre', {className: 'iiid-source'}, String(output.body || '').split('\n').slice(0, 8).join('\n')));
      if (verb === 'index') return h('div', {className: 'iiid-card'}, plural(output.workers_count || 0, 'worker'), h('pre', {className: 'iiid-source'}, String(output.body || '').slice(0, 400)));
      if (verb === 'create' || verb === 'update') return h('div', {className: 'iiid-card'}, `Saved skill ${output.id}`, ' ', openButton('skills', output.id));
      const families = [['skills_written', 'skills'], ['system_prompts_written', 'system prompts'], ['agents_written', 'agent profiles'], ['agents_skipped', 'skipped profiles']];
      return h('div', {className: 'iiid-card'}, h('div', null, [output.namespace, output.source].filter(Boolean).join(' · ')),
        families.map(([k, label]) => (Array.isArray(output[k]) && output[k].length ? h('div', {key: k}, `${label} · ${output[k].length}: `,
          output[k].map((x) => (typeof x === 'string' ? x : `${x.id || x.name || ''}${x.owned_by ? ` (${x.owned_by})` : ''}`)).join(', ')) : null)));
    }
    if (family === 'system-prompts') {
      if (verb === 'list') return h('div', {className: 'iiid-card'}, (output.system_prompts || output.prompts || []).map((p) => h('div', {key: p.name}, h('strong', null, p.name), ' ', p.description)));
      if (verb === 'get') return h('div', {className: 'iiid-card'}, h('strong', null, output.name), ' ', output.description);
      return h('div', {className: 'iiid-card'}, `Saved system prompt ${output.name}`);
    }
    if (family === 'agents') {
      if (verb === 'list') return h('div', {className: 'iiid-card'}, h('div', null, plural((output.agents || []).length, 'agent profile')),
        (output.agents || []).map((a) => h('div', {key: a.id}, h('code', null, a.id), ' ', a.name)));
      if (verb === 'get') return h('div', {className: 'iiid-card'}, h('strong', null, output.name), ' ', output.model || '',
        h('div', {className: 'iiid-muted'}, `${plural((output.skills || []).length, 'skill')} · ${plural((output.functions || []).length, 'function')}`),
        (output.unknown_skills || []).length ? h('div', null, `unknown skills: ${output.unknown_skills.join(', ')}`) : null,
        (output.unknown_functions || []).length ? h('div', null, `unknown functions: ${output.unknown_functions.join(', ')}`) : null);
      if (verb === 'create' || verb === 'update') return h('div', {className: 'iiid-card'}, `Saved agent profile ${output.id}`, ' ', openButton('agents', output.id));
      if (verb.startsWith('functions::')) {
        const ids = verb.endsWith('add') ? output.added : output.removed;
        return h('div', {className: 'iiid-card'}, output.unchanged ? 'Nothing changed.' : `${verb.endsWith('add') ? 'Added' : 'Removed'}: ${(ids || []).join(', ')}`);
      }
    }
    if (family === 'registry') {
      const rows = Array.isArray(output.workers) ? output.workers : [output];
      return h('div', {className: 'iiid-card'}, rows.map((w, i) => h('div', {key: w.name || i}, h('strong', null, w.name), ' ', w.version || w.latest_version || '', ' ', w.description || '')));
    }
    return null;
  }

  const safe = (fn) => (msg) => {
    try { return fn(msg); } catch (error) { console.warn('[iii-directory] card render failed:', error); return null; }
  };

  const directoryRenderer = {
    id: 'iii-directory/page.js#directory',
    isMatch: (functionId) => claimsFunction(functionId),
    tryRender: safe((msg) => {
      const {functionId, input, output} = readMessage(msg);
      if (!output || typeof output !== 'object' || output.error) return null;
      return renderDone(functionId, input, output);
    }),
    tryRenderRunning: safe((msg) => {
      const {functionId, input} = readMessage(msg);
      if (['directory::download-kit', 'directory::kits::plan-update', 'directory::kits::remove'].includes(functionId)) return h('div', {className: 'iiid-card'}, `Planning ${input.kit || ''}…`);
      if (functionId === 'directory::kits::apply') return h(ApplyRunning, {planId: input.plan_id});
      if (functionId === 'directory::kits::check-updates') return h('div', {className: 'iiid-card'}, 'Checking installed kits for updates…');
      return null;
    }),
    tryRenderPreview: safe((msg) => {
      const {functionId, input} = readMessage(msg);
      if (functionId !== 'directory::kits::apply' || !input.plan_id) return null;
      return h(ApprovalPreview, {input});
    }),
  };

  function SearchCard({model, input}) {
    const [open, setOpen] = useState(false);
    const caps = Array.isArray(input.capabilities) ? input.capabilities : (Array.isArray(input.queries) ? input.queries : []);
    return h('div', {className: 'iiid-card'},
      h('div', {className: 'iiid-card__title'}, model.header, ' ', model.mode ? h(Chip, null, model.mode) : null, ' ', h('span', {className: 'iiid-muted'}, model.latency)),
      caps.length ? h('div', null, caps.map((c, i) => h(Chip, {key: i}, typeof c === 'string' ? c : JSON.stringify(c)))) : null,
      model.workers.map((w) => h('div', {key: w.namespace, className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, w.namespace),
        w.functions.map((f) => h('div', {key: f.function_id}, h('code', null, f.function_id), ' ', h('span', {className: 'iiid-muted'}, f.description))))),
      model.installable.map((w) => h('div', {key: w.name, className: 'iiid-card__section'}, h('strong', null, w.name), ' ', w.version, ' ', w.description,
        h('div', null, h('code', null, w.install)))),
      model.skills.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, 'skills'), model.skills.map((s, i) => h('div', {key: i}, h('code', null, s.id), ' ', s.title))) : null,
      model.triggers.length ? h('div', {className: 'iiid-card__section'}, h('div', {className: 'iiid-card__label'}, 'triggers'), model.triggers.map((t, i) => h('div', {key: i}, h('code', null, t.trigger_type), ' → ', t.function_id))) : null,
      model.guidance ? h('details', {open, onToggle: (e) => setOpen(e.target.open)}, h('summary', null, 'guidance'), h(Markdown, {content: model.guidance})) : null);
  }

  const searchRenderer = {
    id: 'iii-directory/page.js#search',
    isMatch: (functionId) => functionId === 'directory::search_functions',
    tryRender: safe((msg) => {
      const {input, output} = readMessage(msg);
      const model = parseSearchResult(output);
      return model ? h(SearchCard, {model, input}) : null;
    }),
  };

  return {directoryRenderer, searchRenderer};
}

// ============================================================================ palette, configuration form, session chip (§4.16)

export const CONFIG_SECTIONS = [
  {title: 'Content locations', fields: [
    ['skills_folder', 'Skills folder', 'text'], ['local_skills_folder', 'Local skills folder', 'text'], ['agents_folder', 'Agents folder', 'text'],
    ['global_agents_folder', 'Global agents folder', 'text'], ['agents_skills_folder', 'Agents skills folder', 'text'],
    ['global_agents_skills_folder', 'Global agents skills folder', 'text']]},
  {title: 'Worker registry', fields: [
    ['registry_url', 'Registry URL', 'text'], ['download_timeout_ms', 'Download timeout (ms)', 'number'],
    ['registry_cache_ttl_ms', 'Registry cache TTL (ms)', 'number'], ['registry_search', 'Search the registry', 'switch']]},
  {title: 'Skill availability', fields: [['filter_unregistered', 'Hide skills of workers that are not installed', 'switch'], ['auto_download', 'Download skills of new workers', 'switch']]},
  {title: 'Search guidance', fields: [['inject_hint', 'Inject the search hint', 'switch'], ['hint_min_workers', 'Minimum workers for the hint', 'number']]},
  {title: 'Function search', fields: [
    ['function_search_mode', 'Search mode', 'choice', ['lexical', 'hybrid', 'judge'], 'judge'],
    ['function_search_judge_question', 'Judge question', 'choice', ['noul', 'choice', 'tournament'], 'choice']]},
];
export const TOPOLOGY_KEYS = ['skills_folder', 'local_skills_folder', 'agents_folder', 'agents_skills_folder', 'auto_download'];

function createExtras(ui) {
  const {h, React, host, Button, Dialog, Chip, Alert, CopyButton, call} = ui;
  const {useState, useEffect, useRef} = React;

  function ConfigForm({schema, value, onChange, errors, focusField}) {
    const [texts, setTexts] = useState({});
    const [fieldErrors, setFieldErrors] = useState({});
    const refs = useRef({});
    const current = value && typeof value === 'object' ? value : {};
    useEffect(() => {
      const key = Array.isArray(focusField) ? focusField[0] : null;
      const node = key && refs.current[key];
      if (node) { node.focus(); if (node.scrollIntoView) node.scrollIntoView({block: 'center'}); }
    }, [Array.isArray(focusField) ? focusField.join('/') : '']);
    const errorFor = (key) => (errors && typeof errors.get === 'function' ? errors.get(`/${key}`) : null);
    const known = new Set(CONFIG_SECTIONS.flatMap((s) => s.fields.map((f) => `/${f[0]}`)));
    const others = errors && typeof errors.forEach === 'function' ? (() => { const out = []; errors.forEach((msg, ptr) => { if (!known.has(ptr)) out.push(`${ptr || '/'}: ${msg}`); }); return out; })() : [];
    const apply = (key, input) => {
      const result = configPatch(current, key, input);
      if (result.error) { setFieldErrors({...fieldErrors, [key]: result.error}); return; }
      setFieldErrors({...fieldErrors, [key]: null});
      onChange(result.value);
    };
    const field = ([key, label, kind, choices, fallback]) => {
      const id = `iiid-cfg-${key}`;
      let control;
      if (kind === 'switch') {
        control = h('input', {id, type: 'checkbox', role: 'switch', ref: (n) => { refs.current[key] = n; }, checked: current[key] === true,
          'aria-label': label, onChange: (e) => apply(key, {kind: 'switch', raw: e.target.checked})});
      } else if (kind === 'choice') {
        control = h('select', {id, className: 'iiid-select', ref: (n) => { refs.current[key] = n; }, value: current[key] ?? fallback, 'aria-label': label,
          onChange: (e) => apply(key, {kind: 'choice', raw: e.target.value})}, choices.map((c) => h('option', {key: c, value: c}, c)));
      } else {
        const shown = Object.prototype.hasOwnProperty.call(texts, key) ? texts[key] : (current[key] ?? '');
        control = h('input', {id, className: 'iiid-input', type: 'text', inputMode: kind === 'number' ? 'numeric' : undefined, ref: (n) => { refs.current[key] = n; },
          value: String(shown), 'aria-label': label, onChange: (e) => { setTexts({...texts, [key]: e.target.value}); apply(key, {kind, raw: e.target.value}); }});
      }
      const message = fieldErrors[key] || errorFor(key);
      return h('div', {key, className: 'iiid-field iiid-cfgfield'},
        h('label', {htmlFor: id, className: 'iiid-field__label'}, label, ' ', h('code', {className: 'iiid-cfgkey'}, key),
          TOPOLOGY_KEYS.includes(key) ? h(Chip, {tone: 'warn'}, 'Restart required') : null),
        control,
        message ? h('span', {className: 'iiid-fielderror', role: 'alert'}, message) : null);
    };
    return h('div', {className: 'iiid-config'},
      others.length ? h(Alert, null, h('ul', null, others.map((m, i) => h('li', {key: i}, m)))) : null,
      CONFIG_SECTIONS.map((section) => h('fieldset', {key: section.title, className: 'iiid-cfgsection'},
        h('legend', null, section.title), section.fields.map(field))));
  }

  function partsOf(answer) {
    const list = Array.isArray(answer) ? answer : (answer && Array.isArray(answer.parts) ? answer.parts : null);
    if (!list) return null;
    return list.filter((p) => p && typeof p === 'object').map((p) => ({kind: String(p.kind ?? p.type ?? 'part'), title: p.title ? String(p.title) : '',
      text: String(p.text ?? p.content ?? '')}));
  }

  function SystemPromptChip({sessionId}) {
    const [meta, setMeta] = useState(null);
    const [open, setOpen] = useState(false);
    const [detail, setDetail] = useState(null);
    const load = () => {
      if (!sessionId) return;
      call('session::get', {session_id: sessionId}).then((res) => {
        const sp = (res && (res.metadata || res.meta || {}).system_prompt) || {};
        const choice = sp.choice || {};
        setMeta({name: choice.named || 'default', mode: sp.strategy === 'override' ? 'replace' : 'enrich', raw: sp});
      }, () => setMeta({name: 'default', mode: 'enrich'}));
    };
    useEffect(() => {
      load();
      if (!sessionId || !host.iii || typeof host.iii.on !== 'function') return undefined;
      const ids = [['session::meta-updated', `iii::iii-directory-ui::sysprompt-meta::${sessionId}`], ['session::created', `iii::iii-directory-ui::sysprompt-created::${sessionId}`]];
      const offs = ids.map(([type, id]) => {
        const off = host.iii.on(id, (payload) => { if (!payload || payload.session_id === sessionId) load(); });
        const offTrigger = host.iii.registerTrigger({type, function_id: `${id}::${host.iii.browserId}`, config: {}});
        return () => { try { offTrigger(); } catch { /* gone */ } try { off(); } catch { /* gone */ } };
      });
      return () => offs.forEach((f) => f());
    }, [sessionId]);
    const show = () => {
      setOpen(true);
      setDetail({status: 'loading'});
      const payload = {session_id: sessionId};
      if (meta && meta.raw && meta.raw.strategy) payload.mode = meta.raw.strategy;
      if (meta && meta.name && meta.name !== 'default') payload.selected_prompt = meta.name;
      call('harness::system-prompt::get', payload).then((res) => setDetail({status: 'ready', parts: partsOf(res), raw: res}),
        (err) => setDetail({status: 'error', error: cleanError(err)}));
    };
    if (!meta) return null;
    return h('span', {className: 'iiid-chipwrap'},
      h('button', {type: 'button', className: 'iiid-chip iiid-chip--neutral iiid-chipbtn', onClick: show}, `${meta.name} · ${meta.mode}`),
      open ? h('div', {'data-iii-ui': 'iii-directory', style: {display: 'contents'}},
        h(Dialog, {open, onClose: () => setOpen(false), title: 'Effective system prompt', wide: true},
          !detail || detail.status === 'loading' ? h('p', null, 'Loading…') : detail.status === 'error' ? h(Alert, null, detail.error)
            : detail.parts ? detail.parts.map((p, i) => h('section', {key: i, className: 'iiid-card'},
              h('div', {className: 'iiid-card__title'}, p.title || p.kind, ' ', h(Chip, null, `~${Math.round(p.text.length / 4)} tokens`), ' ', h(CopyButton, {text: p.text})),
              h('pre', {className: 'iiid-source'}, p.text)))
              : h('pre', {className: 'iiid-source'}, JSON.stringify(detail.raw, null, 2)))) : null);
  }

  return {ConfigForm, SystemPromptChip};
}

/** The palette source `directory-entries` (§4.16); lists are reused for 5 s within a session. */
export function createPaletteSource(host) {
  let cache = null;
  return {
    id: 'directory-entries', title: 'Directory', kind: 'item', minQuery: 2,
    async search(query, options) {
      const signal = options && options.signal;
      const now = Date.now();
      if (!cache || now - cache.at > 5000) {
        const [skills, agents] = await Promise.all([
          host.iii.trigger('directory::skills::list', {include_description: true}).then((r) => r.skills || [], () => []),
          host.iii.trigger('directory::agents::list', {}).then((r) => r.agents || [], () => []),
        ]);
        cache = {at: now, skills, agents};
      }
      if (signal && signal.aborted) return [];
      return paletteRows(cache.skills, cache.agents, query).map((row) => ({
        id: row.id, title: row.title, detail: row.detail, meta: row.meta,
        run: () => host.panels && host.panels.open && host.panels.open({pageId: 'directory', context: {collection: row.collection, key: row.key}}),
      }));
    },
  };
}

// ============================================================================ setup(host) (§4.0)

function contribute(name, register) {
  try {
    const remover = register();
    return typeof remover === 'function' ? remover : null;
  } catch (error) {
    console.warn(`[iii-directory] ${name} unavailable: ${error}`);
    return null;
  }
}

export default async function setup(host) {
  let React;
  try {
    const mod = await import('react');
    React = mod.default ?? mod;
  } catch (error) {
    console.error('[iii-directory] React could not be imported; nothing is registered:', error);
    return undefined;
  }
  const ui = createUi(React, host);
  const browsers = createBrowsers(ui);
  const kits = createKits(ui);
  const {DirectoryPage} = createShell(ui, browsers, kits);
  const cards = createCards(ui);
  const extras = createExtras(ui);
  const h = React.createElement;
  const removers = [
    contribute('page', () => host.pages.register({id: 'directory', title: 'Directory', configurationId: 'iii-directory', render: (props) => h(DirectoryPage, props)})),
    contribute('palette source', () => host.palette.registerSource(createPaletteSource(host))),
    contribute('command', () => host.commands.register('directory', [{id: 'open-directory', title: 'Open Directory', keywords: ['skills', 'agents', 'kits'],
      run: () => host.panels && host.panels.open && host.panels.open({pageId: 'directory', context: {}})}])),
    contribute('directory cards', () => host.functionTriggers.register(cards.directoryRenderer)),
    contribute('search card', () => host.functionTriggers.register(cards.searchRenderer)),
    contribute('configuration form', () => host.configForms.register('iii-directory', extras.ConfigForm, {layout: 'contained'})),
    contribute('transcript renderer', () => (host.chat && typeof host.chat.registerTranscriptRenderer === 'function'
      ? host.chat.registerTranscriptRenderer({id: 'directory', render: () => null}) : null)),
    contribute('session chip', () => host.chat.registerSessionChip({id: 'system-prompt', render: (props) => h(extras.SystemPromptChip, {sessionId: props && props.sessionId})})),
  ].filter(Boolean);
  return () => {
    for (const remove of removers.reverse()) {
      try { remove(); } catch { /* the loader also runs them; a second call does nothing */ }
    }
  };
}
