// iii-directory — the Directory page for the iii console (docs/rules/console.md §3–§4,
// docs/console-page.md).
//
// Hand-written ES modules, no build step. This script is the only one the console imports at mount:
// setup(host) imports React through the console's import map and the page's other modules through
// host.importModule (each a `console:module` asset, PAGE_MODULES), then hands them what they need.
// No module has a static import, so node's unit tests import the pure rules directly (tests/ui/unit),
// and every module is imported at its own versioned URL, so one setup never mixes two versions.

export const PAGE_VERSION = '0.1.0';
export const MODULE_API = 1;

/** The page's modules by name: pure rules first (no React), then the UI factories. */
export const PAGE_MODULES = {
  rules: 'iii-directory/rules.js',
  frontmatter: 'iii-directory/frontmatter.js',
  diff: 'iii-directory/diff.js',
  markdown: 'iii-directory/markdown.js',
  plans: 'iii-directory/plans.js',
  entries: 'iii-directory/entries.js',
  ui: 'iii-directory/ui.js',
  list: 'iii-directory/list.js',
  browser: 'iii-directory/browser.js',
  kits: 'iii-directory/kits.js',
  cards: 'iii-directory/cards.js',
};
const PURE_MODULES = ['rules', 'frontmatter', 'diff', 'markdown', 'plans', 'entries'];

/**
 * One flat object of every pure rule (the exports of the pure modules; no two export one name)
 * plus MODULE_API: what the UI factories and module.js's `createKitsReview` receive as `rules`.
 */
export function composeRules(modules) {
  const out = {MODULE_API};
  for (const name of PURE_MODULES) {
    for (const [key, value] of Object.entries(modules[name] || {})) {
      if (key in out && out[key] !== value) throw new Error(`page modules export ${key} twice`);
      out[key] = value;
    }
  }
  return out;
}

/**
 * The URL of a page module beside this file, carrying this file's own query (`?v=<hash>`), so a
 * new page.js version never reuses modules a tab imported for the previous one.
 */
export function siblingUrl(path, base) {
  const here = new URL(base);
  return new URL(`./${path.split('/').pop()}${here.search}`, here).href;
}

/**
 * Import every page module: through host.importModule (versioned by the console), or on a console
 * without it, from beside this file (siblingUrl). A failed import is retried once after 1 s (§2.6).
 */
export async function loadPageModules(host, {wait = (ms) => new Promise((done) => setTimeout(done, ms)), base = import.meta.url} = {}) {
  const names = Object.keys(PAGE_MODULES);
  const one = typeof host.importModule === 'function' ? (path) => host.importModule(path) : (path) => import(siblingUrl(path, base));
  const load = () => Promise.all(names.map((name) => one(PAGE_MODULES[name])));
  let loaded;
  try { loaded = await load(); } catch { await wait(1000); loaded = await load(); }
  return Object.fromEntries(names.map((name, i) => [name, loaded[i]]));
}

function createShell(ui, rules, browsers, kits) {
  const {ADAPTERS, COLLECTIONS, attentionBadge, routeFromContext, skillOwners, storageGet, storageSet} = rules;
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

/** The palette source `directory-entries` (§4.16); lists are reused for 5 s within a session. `rules` gives `paletteRows`. */
export function createPaletteSource(host, {paletteRows}) {
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

function contribute(name, register) {
  try {
    const remover = register();
    return typeof remover === 'function' ? remover : null;
  } catch (error) {
    console.warn(`[iii-directory] ${name} unavailable: ${error}`);
    return null;
  }
}

/**
 * The first screen of skills, asked as setup starts, beside the imports of React and the page's
 * modules: the same request as the skills list's first-screen call (`entries.js` ADAPTERS, a unit
 * test holds them equal), so the page's first rows do not wait for the imports and a first render.
 */
export const FIRST_SCREEN = {fn: 'directory::skills::list', payload: {include_description: true, include_origin: true, limit: 60}};
/** How long an early first screen may be handed out; the whole list replaces it anyway. */
const FIRST_SCREEN_FRESH_MS = 30000;

const sameRequest = (a, b) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());

/**
 * Ask for FIRST_SCREEN now; returns `take(fn, payload)`, which hands the answer's promise out once,
 * for the same request, while it is fresh, else null (the caller asks itself).
 */
export function prefetchFirstScreen(host, now = Date.now) {
  const trigger = host && host.iii && host.iii.trigger;
  if (typeof trigger !== 'function') return () => null;
  let promise;
  try { promise = Promise.resolve(trigger.call(host.iii, FIRST_SCREEN.fn, FIRST_SCREEN.payload)); } catch { return () => null; }
  promise.catch(() => {});
  const at = now();
  let taken = false;
  return (fn, payload) => {
    if (taken || fn !== FIRST_SCREEN.fn || !sameRequest(payload, FIRST_SCREEN.payload) || now() - at > FIRST_SCREEN_FRESH_MS) return null;
    taken = true;
    return promise;
  };
}

export default async function setup(host) {
  const firstScreen = prefetchFirstScreen(host);
  const [react, modules] = await Promise.allSettled([import('react'), loadPageModules(host)]);
  if (react.status === 'rejected') {
    console.error('[iii-directory] React could not be imported; nothing is registered:', react.reason);
    return undefined;
  }
  if (modules.status === 'rejected') {
    console.error('[iii-directory] the page modules could not be imported; nothing is registered:', modules.reason);
    return undefined;
  }
  const React = react.value.default ?? react.value;
  const rules = composeRules(modules.value);
  const {ui: uiModule, list, browser, kits: kitsModule, cards: cardsModule} = modules.value;
  const ui = uiModule.createUi(React, host, rules);
  const browsers = browser.createBrowsers(ui, rules, list.createListParts(ui, rules), {firstScreen});
  const kits = kitsModule.createKits(ui, rules);
  const {DirectoryPage} = createShell(ui, rules, browsers, kits);
  const cards = cardsModule.createCards(ui, rules);
  const extras = cardsModule.createExtras(ui, rules);
  const h = React.createElement;
  const removers = [
    contribute('page', () => host.pages.register({id: 'directory', title: 'Directory', configurationId: 'iii-directory', render: (props) => h(DirectoryPage, props)})),
    contribute('palette source', () => host.palette.registerSource(createPaletteSource(host, rules))),
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
