// iii-directory — the page's general rules: errors, routes, origins, the list, reachability (docs/console-page.md, docs/rules/console.md §3.3).
//
// Pure rules: no imports and no React; loading the file touches nothing (no window, document or storage),
// so node's unit tests load it directly (tests/ui/unit). The page loads it with host.importModule
// and hands its exports to the UI modules (page.js `composeRules`).

export const COLLECTIONS = ['skills', 'agents', 'kits'];

/** The rejection text without a leading `remote error (<x>): ` and then `handler error: `. */
export function cleanError(error) {
  let text = error == null ? '' : (typeof error === 'string' ? error : (error.message ?? String(error)));
  text = String(text).replace(/^remote error \([^)]*\):\s*/, '');
  text = text.replace(/^handler error:\s*/, '');
  return text;
}

export function toMillis(now) {
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

/** The key of the row to focus after `key`'s row goes away: the next row, else the one before. */
export function neighbourKey(items, key) {
  const rows = (items || []).filter((item) => item.type !== 'group');
  const at = rows.findIndex((item) => item.key === key);
  if (at < 0) return null;
  return (rows[at + 1] || rows[at - 1] || {}).key ?? null;
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

/** A count from a list, an object keyed by name, or a number. */
export function countOf(value) {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'number') return value;
  return value && typeof value === 'object' ? Object.keys(value).length : 0;
}

export function kitInitials(kit) {
  const name = String(kit || '').split('/').pop() || '?';
  const parts = name.split(/[-_.]/).filter(Boolean);
  return (parts.length > 1 ? parts[0][0] + parts[1][0] : name.slice(0, 2)).toUpperCase();
}

/** Text with `backticks` rendered as code elements (plan messages, review texts). */
export function withCode(h, text) {
  return String(text || '').split('`').map((part, i) => (i % 2 ? h('code', {key: i}, part) : part));
}

/** Read the chat's record of one function call defensively. */
export function readMessage(msg) {
  const m = msg || {};
  const functionId = m.functionId ?? m.function_id;
  const input = m.input ?? m.arguments ?? m.args ?? {};
  let output = m.output ?? m.result;
  if (output && typeof output === 'object' && Array.isArray(output.content) && 'details' in output) output = output.details;
  return {functionId, input: input && typeof input === 'object' ? input : {}, output};
}
