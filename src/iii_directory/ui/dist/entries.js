// iii-directory — the two collections (skills, agent profiles): adapters, timeouts, body-search timing, storage keys (docs/console-page.md, docs/rules/console.md §3.3).
//
// Pure rules: no imports and no React; loading the file touches nothing (storage is read only when a function is called),
// so node's unit tests load it directly (tests/ui/unit). The page loads it with host.importModule
// and hands its exports to the UI modules (page.js `composeRules`).

export const LS_PREFIX = 'iii-directory:';

/** `area` is localStorage (drafts, settings) or sessionStorage (this tab's open document). */
export function storageGet(key, fallback, area = globalThis.localStorage) {
  try {
    const raw = area ? area.getItem(LS_PREFIX + key) : null;
    return raw == null ? fallback : JSON.parse(raw);
  } catch {
    return fallback;
  }
}

export function storageSet(key, value, area = globalThis.localStorage) {
  try {
    if (!area) return;
    if (value == null) area.removeItem(LS_PREFIX + key);
    else area.setItem(LS_PREFIX + key, JSON.stringify(value));
  } catch {
    // storage full or disabled: drafts are a convenience
  }
}

export const MIN = 60 * 1000;

export const TIMEOUT_2_MIN = 2 * MIN;

export const TIMEOUT_20_MIN = 20 * MIN;

/**
 * Body search timing: a keystroke after a quiet spell of this long asks the worker at once; a
 * keystroke inside a burst of typing waits for this long a pause. At most this many words are searched.
 */
export const BODY_SEARCH_PAUSE_MS = 150;

export const BODY_SEARCH_WORDS = 4;

/** Rows of the first, small `skills::list` answer that fills the first screen while the whole list is read. */
export const FIRST_SCREEN_ROWS = 60;

export const SKILL_ID = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

export const AGENT_ID = /^[a-z0-9_-]{1,64}$/;

export const AGENT_ICONS = ['agent', 'code', 'search', 'terminal', 'database', 'test', 'review', 'docs', 'design'];

export const AGENT_COLORS = ['neutral', 'blue', 'purple', 'teal', 'green', 'amber', 'rose'];

export const EFFORTS = ['minimal', 'low', 'medium', 'high'];

export const AGENT_TEMPLATE = '---\nname: \ndescription: \n---\n';

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
export function isBuiltinRow(row) {
  return !!(row && (row.builtin || (row.source && row.source.kind === 'builtin')));
}

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
