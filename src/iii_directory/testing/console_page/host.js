// The harness's stub host and asset loader (docs/rules/console.md §5.8). Calls reach the real worker
// through the harness server's bridge; asset pushes arrive on the same event stream.
import React from 'react';
import {createRoot} from 'react-dom/client';

const h = React.createElement;
/** Asset URLs resolve against the document base (§1.8). */
const assetUrl = (rel) => new URL(rel, document.baseURI).href;
const query = new URLSearchParams(location.search);
const browserId = `console-harness-${Math.random().toString(36).slice(2, 10)}`;
const H = window.__harness = {ready: false, browserId, loaderLog: [], registrations: [], panelsOpened: [], dirty: false, errors: []};
if (query.get('theme') === 'dark') document.documentElement.dataset.theme = 'dark';

async function post(path, body) {
  const res = await fetch(path, {method: 'POST', headers: {'content-type': 'application/json'}, body: JSON.stringify(body)});
  return res.json();
}

// ------------------------------------------------------------------ engine client
const handlers = new Map();
const iii = {
  browserId,
  async trigger(functionId, payload = {}, options = {}) {
    const timeoutMs = options && options.timeoutMs ? options.timeoutMs : 5 * 60 * 1000;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      const res = await fetch('/bridge/trigger', {method: 'POST', headers: {'content-type': 'application/json'}, signal: abort.signal,
        body: JSON.stringify({function_id: functionId, payload, timeout_ms: timeoutMs})});
      const body = await res.json();
      if (!body.ok) throw new Error(`remote error (${body.error.code}): ${body.error.message}`);
      return body.result;
    } finally {
      clearTimeout(timer);
    }
  },
  on(functionId, handler) {
    const full = `${functionId}::${browserId}`;
    let set = handlers.get(full);
    if (!set) {
      set = new Set();
      handlers.set(full, set);
      post('/bridge/on', {function_id: full, browser_id: browserId});
    }
    set.add(handler);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      set.delete(handler);
      if (set.size === 0 && handlers.get(full) === set) {
        handlers.delete(full);
        post('/bridge/off', {function_id: full, browser_id: browserId});
      }
    };
  },
  registerTrigger({type, function_id, config}) {
    let id = null;
    let removed = false;
    post('/bridge/register-trigger', {type, function_id, config: config || {}, browser_id: browserId}).then((res) => {
      id = res.id;
      if (removed && id) post('/bridge/unregister-trigger', {id});
    }, (err) => console.warn('registerTrigger failed', err));
    return () => {
      if (removed) return;
      removed = true;
      if (id) post('/bridge/unregister-trigger', {id});
    };
  },
  addConnectionStateListener(handler) {
    connectionListeners.add(handler);
    handler(connectionState);
    return () => connectionListeners.delete(handler);
  },
};
// Test switches: `__harness.setConnection(state)` drives the connection-state listeners;
// `?fail=<function id>,…` makes those calls reject as an unreachable worker would;
// `__harness.hold(functionId)` (or `?hold=<function id>,…` from the start) keeps that function's
// calls waiting until `__harness.release()` (`?holdWhole=<function id>,…`: only its calls without a
// `limit`, e.g. the whole skills list but not its first screen); `__harness.unreachable(true)` answers every
// `directory::` call as the engine does once the worker is gone.
let connectionState = 'connected';
const connectionListeners = new Set();
H.setConnection = (state) => { connectionState = state; connectionListeners.forEach((l) => l(state)); };
const failing = new Set((query.get('fail') || '').split(',').filter(Boolean));
const realTrigger = iii.trigger;
const held = {ids: new Set((query.get('hold') || '').split(',').filter(Boolean)),
  whole: new Set((query.get('holdWhole') || '').split(',').filter(Boolean)), waiting: []};
let unreachable = false;
H.unreachable = (on) => { unreachable = !!on; };
H.hold = (functionId) => { held.ids.add(functionId); };
H.release = () => { held.ids.clear(); held.whole.clear(); held.waiting.splice(0).forEach((go) => go()); };
H.heldCalls = () => held.waiting.length;
iii.trigger = async (functionId, payload, options) => {
  if (failing.has(functionId)) throw new Error(`remote error (invocation_failed): function ${functionId} timed out (harness ?fail)`);
  const whole = held.whole.has(functionId) && !(payload && typeof payload === 'object' && 'limit' in payload);
  if (held.ids.has(functionId) || whole) await new Promise((go) => held.waiting.push(go));
  if (unreachable && functionId.startsWith('directory::')) {
    throw new Error(`remote error (function_not_found): Function '${functionId}' not found (harness unreachable)`);
  }
  return realTrigger(functionId, payload, options);
};

// ------------------------------------------------------------------ registrations and rendering
const listeners = new Set();
let version = 0;
const changed = () => { version += 1; listeners.forEach((l) => l()); };
let panelContext = null;
let panelCounter = 0;

let serials = 0;

function makeHost(path) {
  const tracked = [];
  const register = (kind, entry) => {
    serials += 1;
    const record = {kind, path, serial: serials, ...entry};
    H.registrations.push(record);
    changed();
    let done = false;
    const remove = () => {
      if (done) return;
      done = true;
      const i = H.registrations.indexOf(record);
      if (i >= 0) H.registrations.splice(i, 1);
      changed();
    };
    tracked.push(remove);
    return remove;
  };
  const host = {
    iii, path, components: {}, uiClasses: {},
    useTheme() {
      const [theme, setTheme] = React.useState(document.documentElement.dataset.theme || 'light');
      React.useEffect(() => {
        const obs = new MutationObserver(() => setTheme(document.documentElement.dataset.theme || 'light'));
        obs.observe(document.documentElement, {attributes: true});
        return () => obs.disconnect();
      }, []);
      return theme;
    },
    pages: {register: (page) => register('page', {id: page.id, title: page.title, configurationId: page.configurationId, page})},
    commands: {register: (pageId, commands) => register('command', {pageId, commands, titles: commands.map((c) => c.title)})},
    palette: {registerSource: (source) => register('palette', {id: source.id, source}), open: () => {}},
    functionTriggers: {register: (renderer) => register('functionTrigger', {id: renderer.id, renderer})},
    triggerRenderers: {register: (renderer) => register('triggerRenderer', {id: renderer.id, renderer})},
    overlays: {register: (overlay) => register('overlay', {id: overlay.id, overlay})},
    configForms: {register: (id, Component, options) => register('configForm', {id, Component, options})},
    providerConfigForms: {register: (id, Component) => register('providerConfigForm', {id, Component})},
    chat: {
      registerSessionChip: (chip) => register('sessionChip', {id: chip.id, chip}),
      registerTranscriptRenderer: (renderer) => register('transcriptRenderer', {id: renderer.id, renderer}),
      openDraft: () => {}, compose: () => {},
    },
  };
  if (query.get('noPanels') !== '1') {
    host.panels = {
      open: ({pageId, context}) => {
        H.panelsOpened.push({pageId, context});
        panelCounter += 1;
        panelContext = {id: panelCounter, pageId, context};
        changed();
      },
      openScreen: (args) => register('screen', {args}),
    };
  }
  if (query.get('noImportModule') !== '1') {
    host.importModule = (p) => import(assetUrl(moduleHashes.has(p) ? `ui/${p}?v=${moduleHashes.get(p)}` : `ui/${p}`));
  }
  return {host, tracked};
}

H.openPanel = (context) => {
  H.panelsOpened.push({pageId: 'directory', context});
  panelCounter += 1;
  panelContext = {id: panelCounter, pageId: 'directory', context};
  changed();
};
H.setTheme = (theme) => { document.documentElement.dataset.theme = theme; };

class Boundary extends React.Component {
  constructor(props) { super(props); this.state = {error: null}; }
  static getDerivedStateFromError(error) { return {error}; }
  componentDidCatch(error) { H.errors.push(String(error && error.stack || error)); console.error('[iii-ui] extension crashed', error); }
  render() { return this.state.error ? h('div', {className: 'harness-crash'}, `extension crashed · ${this.props.path}`) : this.props.children; }
}

function useVersion() {
  const [, set] = React.useState(0);
  React.useEffect(() => { const l = () => set(version); listeners.add(l); return () => listeners.delete(l); }, []);
}

function CardRoute({fn, fixture}) {
  useVersion();
  const [msg, setMsg] = React.useState(null);
  React.useEffect(() => { fetch(`/control/fixtures/${encodeURIComponent(fixture)}`).then((r) => r.json()).then(setMsg); }, [fixture]);
  if (!msg) return h('p', null, 'loading fixture…');
  const message = {functionId: fn, input: msg.input, output: msg.output};
  for (const reg of H.registrations.filter((r) => r.kind === 'functionTrigger')) {
    let match = false;
    try { match = reg.renderer.isMatch(fn); } catch { match = false; }
    if (!match) continue;
    const node = reg.renderer.tryRender(message);
    if (node) return h('div', {'data-iii-ui': reg.path.split('/')[0], style: {display: 'contents'}}, h(Boundary, {path: reg.path}, node));
  }
  return h('p', null, 'default card');
}

function Workspace() {
  useVersion();
  const hash = location.hash || '';
  if (hash.startsWith('#/card')) {
    const params = new URLSearchParams(hash.split('?')[1] || '');
    return h(CardRoute, {fn: params.get('fn'), fixture: params.get('fixture')});
  }
  const match = /^#\/(?:worker\/([^/]+)|ext)\/([^/?]+)/.exec(hash);
  if (!match) return h('p', null, 'no route');
  const reg = [...H.registrations].reverse().find((r) => r.kind === 'page' && r.id === match[2]);
  if (!reg) return h('p', null, 'page not registered yet');
  const props = {panelSide: query.get('side') || 'left', tabId: 'harness', paneId: 'harness', onRequestClose: () => { H.closed = true; },
    setDirty: (d) => { H.dirty = d; }, commands: {register: () => () => {}},
    panelContext: panelContext && panelContext.pageId === reg.id ? panelContext : undefined};
  return h('div', {'data-iii-ui': reg.path.split('/')[0], style: {display: 'contents'}},
    h(Boundary, {path: reg.path, key: `${reg.path}#${reg.serial}`}, reg.page.render(props)));
}

window.addEventListener('hashchange', changed);
createRoot(document.getElementById('workspace')).render(h(Workspace));

// ------------------------------------------------------------------ loader (§1.8)
const moduleHashes = new Map();
const loaded = new Map(); // path -> {kind, hash, dispose}

/** Run every tracked remover in reverse registration order until none is left (§1.8). */
async function drain(path, removers) {
  while (removers.length) {
    const remove = removers.pop();
    try { await remove(); } catch (error) { console.error(`[iii-ui] cleanup for ${path} threw`, error); }
  }
}

async function dispose(path) {
  const entry = loaded.get(path);
  loaded.delete(path);
  if (!entry) return;
  if (entry.kind === 'module') { moduleHashes.delete(path); return; }
  if (entry.link) { entry.link.remove(); return; }
  await drain(path, entry.tracked);
}

function styleLink(path, hash) {
  return new Promise((resolve) => {
    const link = document.createElement('link');
    link.rel = 'stylesheet';
    link.href = `ui/${path}?v=${hash}`;
    link.dataset.iiiUiAsset = path;
    link.onload = () => resolve(link);
    link.onerror = () => { console.error(`[iii-ui] failed to load stylesheet ${path}@${hash}`); link.remove(); resolve(null); };
    const old = loaded.get(path);
    if (old && old.link && old.link.parentNode) old.link.after(link); else document.head.appendChild(link);
  });
}

async function apply(asset) {
  const {path, kind, hash} = asset;
  const current = loaded.get(path);
  if (kind === 'module') { await dispose(path); moduleHashes.set(path, hash); loaded.set(path, {kind, hash}); return; }
  if (current && current.hash === hash) return;
  if (kind === 'style') {
    const link = await styleLink(path, hash);
    if (!link) return;
    if (current && current.link) current.link.remove();
    loaded.set(path, {kind, hash, link});
    H.loaderLog.push(`style:${path}`);
    return;
  }
  // Atomic replacement: the new version is set up completely, then the previous one disposed;
  // a failing new version is torn down alone and the last good one stays registered.
  const {host, tracked} = makeHost(path);
  try {
    const mod = await import(assetUrl(`ui/${path}?v=${hash}`));
    if (typeof mod.default !== 'function') throw new Error('no default setup() export');
    const teardown = await mod.default(host);
    if (typeof teardown === 'function') tracked.push(teardown);
  } catch (error) {
    await drain(path, tracked);
    console.error(`[iii-ui] failed to load ${path}@${hash}`, error);
    return;
  }
  if (current) await dispose(path);
  loaded.set(path, {kind, hash, tracked});
  H.loaderLog.push(`script:${path}`);
}

let queue = Promise.resolve();
function enqueue(event) {
  queue = queue.then(async () => {
    if (event.event === 'sync') {
      const listed = new Set(event.assets.map((a) => a.path));
      for (const path of [...loaded.keys()]) if (!listed.has(path)) await dispose(path);
      const order = {module: 0, style: 1, script: 2};
      for (const asset of [...event.assets].sort((a, b) => order[a.kind] - order[b.kind])) await apply(asset);
      H.ready = true;
    } else if (event.event === 'set') await apply(event);
    else if (event.event === 'delete') await dispose(event.path);
  }).catch((error) => { H.errors.push(String(error && error.stack || error)); console.error('[iii-ui] loader failed', error); });
}

const stream = new EventSource(`/bridge/events?browser_id=${encodeURIComponent(browserId)}`);
stream.addEventListener('invoke', (e) => {
  const {function_id: functionId, payload} = JSON.parse(e.data);
  for (const handler of handlers.get(functionId) || []) {
    try { handler(payload); } catch (error) { console.error('handler failed', error); }
  }
});
stream.addEventListener('ui-assets', (e) => enqueue(JSON.parse(e.data)));
