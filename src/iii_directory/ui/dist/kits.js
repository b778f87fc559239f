// iii-directory — the kits pane: sidebar, overview, kit detail and the plan route's loader (docs/console-page.md, docs/rules/console.md §3.3).
//
// Imports nothing: page.js loads it with host.importModule and calls `createKits(ui, rules)` with the
// console's React and host (through `ui`) and the pure rules (`rules`, page.js `composeRules`).

export function createKits(ui, rules) {
  const {MODULE_API, TIMEOUT_2_MIN, cleanError, countOf, formatAgo, humanError, isKitReference, kitInitials, kitStatus, pendingBanner, planRowText, planSummary, planTitle, plural, withCode} = rules;
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
          setReview({status: 'ready', api: mod.createKitsReview({React, host, rules, ui})});
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
