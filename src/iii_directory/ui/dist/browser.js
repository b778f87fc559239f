// iii-directory — the generic browser of one collection: list, filter, body search, document, save, delete, create (docs/console-page.md, docs/rules/console.md §3.3).
//
// Imports nothing: page.js loads it with host.importModule and calls `createBrowsers(ui, rules, parts)` with the
// console's React and host (through `ui`) and the pure rules (`rules`, page.js `composeRules`).

export function createBrowsers(ui, rules, parts, {firstScreen = () => null} = {}) {
  const {BODY_SEARCH_PAUSE_MS, BODY_SEARCH_WORDS, BUILTIN_AGENT_IDS, afterSave, asList, blocksSave, bodyMatchKeys, bodySearchDelay, clampRatio, cleanError, conflictBlocks, draftAction, errorCode, filterWords, functionsEdit, humanError, isBuiltinRow, isReadOnlyPath, isStaleWrite, kitOfSkill, listItems, merge3, narrowPanes, neighbourKey, originBadges, parseFrontmatter, plural, readOnlyRoots, removes, restoreDraft, rowHaystack, sha256Hex, storageGet, storageSet, takeSide} = rules;
  const {h, React, Button, TextInput, Dialog, Markdown, Editor, Choice, Checkbox, Chip, Alert, Skeleton, Confirm, Icon,
    SplitLayout, useSubscription, useCoalesced, call, DiffView, ErrorNote, useReachability} = ui;
  const {useState, useEffect, useRef, useMemo, useCallback} = React;
  const {WindowedList, EntryRow, Picker, AgentForm, SkillFields, ConflictList} = parts;
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
        const payload = {...adapter.list.payload, limit: adapter.list.first};
        // setup may already have asked for exactly this (page.js prefetchFirstScreen).
        (firstScreen(adapter.list.fn, payload) || call(adapter.list.fn, payload)).then((res) => {
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
    // Bodies are searched by the worker (`search_body`, `ids_only`), one call per word: at once
    // after a quiet spell, else after a pause in typing (bodySearchDelay). The effect follows the
    // typed filter, not the deferred one, so the call does not wait for the list's render; id,
    // title and summary matches show at once from the loaded rows.
    const [bodyHits, setBodyHits] = useState(null);
    const [searchingBodies, setSearchingBodies] = useState(false);
    const bodyCache = useRef({rows: null, byWord: new Map(), asking: new Map()});
    const lastFilterChange = useRef(-Infinity);
    useEffect(() => {
      if (adapter.collection !== 'skills') return undefined;
      const words = filterWords(filter).slice(0, BODY_SEARCH_WORDS);
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
    }, [filter, list.rows, adapter]);
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
