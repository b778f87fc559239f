// iii-directory — kit plans and their words: install, update and removal reviews, steps, chat-card summaries (docs/console-page.md, docs/rules/console.md §3.3).
//
// Pure rules: no imports and no React; loading the file touches nothing (no window, document or storage),
// so node's unit tests load it directly (tests/ui/unit). The page loads it with host.importModule
// and hands its exports to the UI modules (page.js `composeRules`).

/** `1 profile`, `2 profiles`, `0 profiles`. */
export function plural(n, word, many) {
  return `${n} ${n === 1 ? word : (many || `${word}s`)}`;
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

export function chosenText(file, choices) {
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

export const collapse = (text) => text.replace(/\s+/g, ' ').trim();

export const withVersion = (name, version) => (version ? `${name} ${version}` : name);

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

export function replacedCounts(plan, choices) {
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

export function fileLabel(file) {
  if (file.kind === 'agent') return file.id || String(file.path).replace(/^agents\//, '').replace(/\.md$/, '');
  return String(file.path).replace(/^skills\//, '').replace(/\.md$/, '');
}

export function fileSign(file) {
  if (file.change === 'added') return '+';
  if (file.change === 'removed') return '−';
  return '~';
}

export function workerState(worker) {
  if (!worker.range) return 'dropped';
  if (worker.action === 'add') return 'new';
  if (worker.action === 'update') return `${worker.range} → ${worker.to ?? ''}`.trim();
  return `${worker.range_from ?? ''} → ${worker.range}`;
}

export function grantsAnything(capabilities) {
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

export const STEP_STATES = ['pending', 'running', 'done', 'failed', 'skipped'];

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

export const CLAIMED = new Set([
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

export const COLLISION_CODES = new Set(['builtin_override', 'file_overwrite_local']);

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

export function asList(value) {
  if (Array.isArray(value)) return value;
  if (value == null || value === '') return [];
  return [String(value)];
}

export function planRowText(summary) {
  if (summary.kind === 'update') return `Update ${summary.from} → ${summary.to}`;
  if (summary.kind === 'remove') return `Remove ${summary.from}`;
  return `Install ${summary.to}`;
}

export function pendingBanner(summary) {
  const warnings = summary.warnings ? ` · ${plural(summary.warnings, 'warning')}` : '';
  if (summary.kind === 'update') return [`An update is waiting for review: `, `${summary.kit} ${summary.from} → ${summary.to}`, warnings];
  if (summary.kind === 'remove') return [`A removal is waiting for review: `, `${summary.kit} ${summary.from}`, warnings];
  return [`An install is waiting for review: `, `${summary.kit} ${summary.to}`, warnings];
}
