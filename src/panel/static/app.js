// The panel's page: plain JavaScript, no build step. Everything it shows comes from
// the panel's own /api (the daemon's token never reaches the browser). Text from the
// config or the daemon is always set as text, never as HTML.
'use strict';

const FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction'];
const STATE_WORDS = {
  RUNNING: 'Running', STARTING: 'Starting', RETRYING: 'Retrying', FAILED: 'Failed', STOPPED: 'Stopped',
  PENDING: 'Pending', UNKNOWN: 'Unknown', NOT_APPLIED: 'Not applied',
};

const state = {
  mode: 'default',
  directions: [],
  config: null,
  statuses: new Map(),
  daemon: { reachable: false, message: 'connecting…', where: '' },
  health: null,
  events: null,
  openLogs: new Set(),
  logs: new Map(), // hash -> the text last shown, so a redrawn card does not flash 'Loading…'
  editing: null, // { index: number | null, hash: string | null, target: number | null }
};

const $ = (id) => document.getElementById(id);

/** Builds an element: h('p', { class: 'x', onclick: fn }, 'text', child). */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

// --- talking to the panel -------------------------------------------------------

async function api(method, path, body) {
  const init = { method, headers: { accept: 'application/json', 'x-panel-request': '1' }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, data: { error: { code: 'offline', message: 'the panel is not reachable' } } };
  }
  let data = null;
  try { data = await res.json(); } catch { /* no body */ }
  if (res.status === 401 && data && data.error && data.error.code === 'login_required') showLogin();
  return { ok: res.ok, status: res.status, data };
}

const sentence = (t) => (t ? t.charAt(0).toUpperCase() + t.slice(1) : '');
const messageOf = (r) => (r.data && r.data.error && r.data.error.message) || `request failed (${r.status})`;

function toast(text, bad) {
  const t = h('div', { class: bad ? 'toast bad' : 'toast' }, text);
  $('toasts').append(t);
  setTimeout(() => t.remove(), bad ? 7000 : 3500);
}

// --- login --------------------------------------------------------------------------

function showOnly(id) {
  for (const s of ['loading', 'login', 'app']) $(s).hidden = s !== id;
}

function showLogin() {
  if (state.events) { state.events.close(); state.events = null; }
  showOnly('login');
  $('logout').hidden = true;
  $('daemon-state').replaceChildren();
  $('password').focus();
}

$('login-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const err = $('login-error');
  err.hidden = true;
  const r = await api('POST', '/api/login', { password: $('password').value });
  if (!r.ok) {
    err.textContent = messageOf(r);
    err.hidden = false;
    $('password').select();
    return;
  }
  $('password').value = '';
  await start();
});

$('logout').addEventListener('click', async () => {
  await api('POST', '/api/logout');
  showLogin();
});

// --- time -----------------------------------------------------------------------------

function duration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours} h ${m % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

function timeText(st) {
  const now = Date.now();
  if (st.status === 'RUNNING') return `up ${duration(now - Date.parse(st.since))}`;
  if (st.status === 'RETRYING' && st.next_retry_at) {
    const left = Date.parse(st.next_retry_at) - now;
    return left > 0 ? `next try in ${duration(left)}` : 'trying now';
  }
  return `${(STATE_WORDS[st.status] || st.status).toLowerCase()} for ${duration(now - Date.parse(st.since))}`;
}

// --- the list ---------------------------------------------------------------------------

function statusOf(entry) {
  const st = entry.hash ? state.statuses.get(entry.hash) : undefined;
  if (st) return st;
  if (!state.daemon.reachable) return { status: 'UNKNOWN' };
  if (!state.config.valid) return { status: 'NOT_APPLIED' };
  return { status: 'PENDING' };
}

function statusLine(st) {
  const meta = [];
  if (st.since) meta.push(h('span', { 'data-time': '' }, timeText(st)));
  if (typeof st.restarts === 'number') meta.push(h('span', null, `${st.restarts} restart${st.restarts === 1 ? '' : 's'}`));
  if (st.pid) meta.push(h('span', null, `pid ${st.pid}`));
  if (st.status === 'UNKNOWN') meta.push(h('span', null, 'daemon not reachable'));
  if (st.status === 'NOT_APPLIED') meta.push(h('span', null, 'the file is invalid; the daemon keeps the last good config'));
  if (st.status === 'PENDING') meta.push(h('span', null, 'waiting for the daemon to reload'));
  return meta;
}

function badge(status) {
  return h('span', { class: 'badge', 'data-state': status, 'data-testid': 'status' }, STATE_WORDS[status] || status);
}

function logsBlock(hash) {
  const pre = h('pre', { 'data-testid': 'logs' }, state.logs.get(hash) || 'Loading…');
  const refresh = h('button', { class: 'btn btn-quiet btn-small', type: 'button', onclick: () => loadLogs(hash, pre) }, 'Refresh');
  const details = h('details', { class: 'logs' }, h('summary', null, 'Recent ssh output'), pre, h('div', { class: 'logs-foot' }, refresh));
  if (state.openLogs.has(hash)) details.open = true;
  details.addEventListener('toggle', () => {
    if (details.open) { state.openLogs.add(hash); loadLogs(hash, pre); } else state.openLogs.delete(hash);
  });
  return details;
}

async function loadLogs(hash, pre) {
  const r = await api('GET', `/api/daemon/logs/${hash}`);
  const text = r.ok ? (r.data.lines.length > 0 ? r.data.lines.join('\n') : '(no output yet)') : messageOf(r);
  state.logs.set(hash, text);
  const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.textContent = text;
  if (atEnd) pre.scrollTop = pre.scrollHeight;
}

function card(entry, stale) {
  const st = stale ? entry.status : statusOf(entry);
  const f = entry.fields;
  const running = st.status === 'RUNNING' || st.status === 'STARTING' || st.status === 'RETRYING';
  const known = Boolean(entry.hash && state.statuses.has(entry.hash));
  const actions = [];
  if (known) {
    actions.push(running
      ? h('button', { class: 'btn btn-small', type: 'button', onclick: () => control('stop', entry) }, 'Stop')
      : h('button', { class: 'btn btn-small', type: 'button', onclick: () => control('start', entry) }, 'Start'));
  }
  if (!stale && !state.config.not_editable) {
    actions.push(h('button', { class: 'btn btn-small', type: 'button', onclick: () => openEditor(entry) }, 'Edit'));
  }
  const tags = [];
  if (entry.interactive) tags.push(h('span', { class: 'tag', title: 'never started automatically' }, 'interactive'));
  if (stale) tags.push(h('span', { class: 'tag' }, 'not in the file'));
  const li = h('li', { class: 'tunnel card', 'data-hash': entry.hash || '', 'data-name': f.name || 'unnamed', 'data-testid': 'tunnel' },
    h('div', { class: 'tunnel-main' },
      h('div', { class: 'tunnel-title' }, h('span', { class: 'tunnel-name' }, f.name || 'unnamed'), badge(st.status), tags),
      h('p', { class: 'tunnel-what', 'data-testid': 'description' }, entry.description || `${f.direction}: ${f.remote_host} ${f.remote_port} ↔ ${f.local_port}`),
      h('p', { class: 'tunnel-meta' },
        h('code', { title: 'remote_host' }, f.remote_host),
        statusLine(st),
        entry.hash ? h('code', { title: 'hash' }, entry.hash.slice(0, 8)) : null),
      st.last_error ? h('p', { class: 'tunnel-error', 'data-testid': 'last-error' }, st.last_error) : null),
    h('div', { class: 'tunnel-actions' }, actions),
    known ? logsBlock(entry.hash) : null);
  li._status = st;
  return li;
}

function renderBanners() {
  const out = [];
  const c = state.config;
  if (!state.daemon.reachable) {
    out.push(h('div', { class: 'banner banner-warn', 'data-testid': 'daemon-banner' },
      h('strong', null, 'The daemon is not reachable'), sentence(state.daemon.message),
      h('div', { class: 'small' }, 'You can still edit the file; the daemon applies it when it runs.')));
  }
  if (c && c.missing) {
    out.push(h('div', { class: 'banner banner-info' }, h('strong', null, 'No config file yet'),
      'It is created when you add the first tunnel.'));
  }
  if (c && !c.valid) {
    out.push(h('div', { class: 'banner banner-danger', 'data-testid': 'config-invalid' },
      h('strong', null, 'The config file is invalid'),
      'The daemon keeps running the last good config until the file is fixed.',
      h('ul', null, c.problems.map((p) => h('li', null, p.message)))));
  } else if (state.health && !state.health.valid && state.daemon.reachable) {
    out.push(h('div', { class: 'banner banner-warn' }, h('strong', null, 'The daemon reports the config as invalid'), state.health.error || ''));
  }
  if (c && c.not_editable) {
    out.push(h('div', { class: 'banner banner-warn' }, h('strong', null, 'This file cannot be edited here'), sentence(c.not_editable)));
  }
  if (c && c.warnings.length > 0) {
    const n = c.warnings.length;
    out.push(h('details', { class: 'banner banner-info banner-fold' },
      h('summary', null, `${n} warning${n === 1 ? '' : 's'} about the config file`),
      h('ul', null, c.warnings.map((p) => h('li', null, p.message)))));
  }
  $('banners').replaceChildren(...out);
}

function renderDaemonState() {
  const d = state.daemon;
  $('daemon-state').replaceChildren(
    h('span', { class: d.reachable ? 'dot ok' : 'dot bad' }),
    h('span', null, d.reachable ? 'daemon connected' : 'daemon not reachable'));
  $('daemon-state').title = d.reachable ? d.where : (d.message || '');
  const anyKnown = state.config && state.config.entries.some((e) => state.statuses.has(e.hash));
  $('start-all').disabled = !d.reachable || !anyKnown;
  $('stop-all').disabled = !d.reachable || !anyKnown;
}

function render() {
  const c = state.config;
  if (!c) return;
  renderBanners();
  renderDaemonState();
  $('tunnels').replaceChildren(...c.entries.map((e) => card(e, false)));
  $('empty').hidden = c.entries.length > 0;
  $('count').textContent = c.entries.length > 0 ? String(c.entries.length) : '';
  $('add').disabled = Boolean(c.not_editable);
  const inFile = new Set(c.entries.map((e) => e.hash));
  const stale = [...state.statuses.values()].filter((s) => !inFile.has(s.hash));
  $('stale-section').hidden = stale.length === 0;
  $('stale').replaceChildren(...stale.map((s) => card({
    hash: s.hash, fields: { name: s.name, remote_host: s.remote_host, remote_port: s.remote_port, local_port: s.local_port, direction: s.direction },
    description: s.description, interactive: false, status: s,
  }, true)));
  $('config-path').textContent = c.path;
  $('mode').textContent = state.mode;
}

/** A status change redraws only that tunnel's card (open logs stay open). */
function renderStatus(rec) {
  const c = state.config;
  if (!c) return;
  const entry = c.entries.find((e) => e.hash === rec.hash);
  const old = document.querySelector(`#tunnels [data-hash="${rec.hash}"]`);
  if (!entry || !old) { render(); return; }
  const fresh = card(entry, false);
  old.replaceWith(fresh);
  renderDaemonState();
  const pre = state.openLogs.has(rec.hash) ? fresh.querySelector('pre') : null;
  if (pre) loadLogs(rec.hash, pre);
}

setInterval(() => {
  for (const li of document.querySelectorAll('.tunnel')) {
    const t = li.querySelector('[data-time]');
    if (t && li._status && li._status.since) t.textContent = timeText(li._status);
  }
}, 1000);

// --- start / stop -------------------------------------------------------------------------

async function control(action, entry) {
  const r = await api('POST', `/api/daemon/${action}/${entry.hash}`);
  if (!r.ok) { toast(`${entry.fields.name || 'unnamed'}: ${messageOf(r)}`, true); return; }
  if (r.data && r.data.hash) { state.statuses.set(r.data.hash, r.data); renderStatus(r.data); }
}

async function controlAll(action) {
  const r = await api('POST', `/api/daemon/${action}`);
  if (!r.ok) { toast(messageOf(r), true); return; }
  if (Array.isArray(r.data)) { for (const s of r.data) state.statuses.set(s.hash, s); render(); }
}

$('start-all').addEventListener('click', () => controlAll('start'));
$('stop-all').addEventListener('click', async () => {
  if (await confirmDialog('Stop all tunnels?', 'Every tunnel stops and stays stopped until you start it again.', 'Stop all')) controlAll('stop');
});

function confirmDialog(title, text, ok) {
  const d = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = ok;
  d.returnValue = '';
  d.showModal();
  return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }));
}

// --- the form ---------------------------------------------------------------------------------

function directionHints(direction) {
  const choice = state.directions.find((d) => d.value === direction);
  const exposes = choice && choice.label.includes('-R');
  $('hint-remote_port').textContent = exposes ? 'Opened on the remote host; "ip:port" binds an address.' : 'The service on the remote side; "host:port" as seen from the remote host.';
  $('hint-local_port').textContent = exposes ? 'The local service; "host:port" to reach another machine.' : 'Where it listens here; "ip:port" binds an address.';
}

function renderDirections(selected) {
  $('f-direction').replaceChildren(...state.directions.map((d) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'direction', value: d.value, checked: d.value === selected, onchange: () => directionHints(d.value) }),
    h('span', null, d.label.replace(/ \(ssh -[LR]\)$/, ''), h('small', null, `${d.value} · ${d.label.match(/ssh -[LR]/)?.[0] || ''}`)))));
  directionHints(selected);
}

function clearErrors() {
  for (const f of FIELDS) {
    $(`err-${f}`).hidden = true;
    const input = f === 'direction' ? null : $(`f-${f}`);
    if (input) input.removeAttribute('aria-invalid');
  }
  $('form-error').hidden = true;
  $('conflict').hidden = true;
}

function showErrors(fields, general) {
  let first = null;
  for (const [f, msg] of Object.entries(fields || {})) {
    const p = $(`err-${f}`);
    if (!p) continue;
    p.textContent = msg;
    p.hidden = false;
    const input = f === 'direction' ? document.querySelector('#f-direction input') : $(`f-${f}`);
    if (input && f !== 'direction') input.setAttribute('aria-invalid', 'true');
    first = first || input;
  }
  if (general && general.length > 0) {
    $('form-error').replaceChildren(h('strong', null, 'The file would not be valid:'), h('ul', null, general.map((g) => h('li', null, g))));
    $('form-error').hidden = false;
  }
  if (first) first.focus();
}

function formFields() {
  const out = {};
  for (const f of FIELDS) {
    out[f] = f === 'direction' ? (document.querySelector('#f-direction input:checked') || {}).value || '' : $(`f-${f}`).value;
  }
  return out;
}

function fillForm(fields) {
  for (const f of FIELDS) if (f !== 'direction') $(`f-${f}`).value = fields[f] || '';
  renderDirections(fields.direction || 'remote_to_local');
}

async function loadSshHosts() {
  const r = await api('GET', '/api/ssh-hosts');
  if (r.ok) $('ssh-hosts').replaceChildren(...r.data.hosts.map((host) => h('option', { value: host })));
}

function openEditor(entry) {
  clearErrors();
  state.editing = entry ? { index: entry.index, hash: entry.hash, version: state.config.version } : { index: null, hash: null, version: state.config.version };
  $('editor-title').textContent = entry ? `Edit ${entry.fields.name || 'unnamed'}` : 'Add tunnel';
  $('delete').hidden = !entry;
  fillForm(entry ? entry.fields : { direction: 'remote_to_local' });
  const kept = entry && entry.other_keys.length > 0;
  $('kept-keys').hidden = !kept;
  if (kept) $('kept-keys').textContent = `Also in the file, kept as they are: ${entry.other_keys.join(', ')}.`;
  loadSshHosts();
  $('editor').showModal();
  $('f-name').focus();
}

for (const b of document.querySelectorAll('[data-close]')) b.addEventListener('click', () => $('editor').close());

$('tunnel-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  await save();
});

async function save() {
  const e = state.editing;
  if (!e) return;
  clearErrors();
  $('save').disabled = true;
  const body = { version: e.version, fields: formFields(), hash: e.hash };
  const r = e.index === null
    ? await api('POST', '/api/tunnels', { version: body.version, fields: body.fields, hash: null })
    : await api('PUT', `/api/tunnels/${e.index}`, body);
  $('save').disabled = false;
  if (r.ok) {
    $('editor').close();
    state.editing = null;
    setConfig(r.data.config);
    toast(`Saved ${body.fields.name || 'unnamed'}`);
    if (r.data.backup_error) toast(r.data.backup_error, true);
    return;
  }
  const code = r.data && r.data.error && r.data.error.code;
  if (code === 'invalid') showErrors(r.data.fields, r.data.general);
  else if (code === 'conflict') showConflict(r.data, body.fields);
  else showErrors({}, [messageOf(r)]);
}

function compareList(fields, other) {
  return h('dl', null, FIELDS.flatMap((f) => [
    h('dt', null, f),
    h('dd', { class: other && (other[f] || '') !== (fields[f] || '') ? 'diff' : null }, fields[f] || '—'),
  ]));
}

/** The file changed on disk: show both sides; the form keeps the user's values. */
function showConflict(data, mine) {
  const e = state.editing;
  const theirs = data.theirs;
  const box = $('conflict');
  const useMine = h('button', { class: 'btn btn-primary btn-small', type: 'button', onclick: () => {
    e.version = data.current.version;
    if (e.index !== null) {
      if (theirs) { e.index = theirs.index; e.hash = theirs.hash; } else { e.index = null; e.hash = null; }
    }
    save();
  } }, e.index !== null && !theirs ? 'Add mine as a new tunnel' : 'Save my version');
  const useTheirs = h('button', { class: 'btn btn-small', type: 'button', onclick: () => {
    setConfig(data.current);
    $('editor').close();
    toast('Loaded the version on disk');
  } }, 'Discard mine, load the file');
  const explain = e.index === null
    ? 'Your new tunnel was not added yet.'
    : theirs
      ? (data.theirs_unchanged ? 'This tunnel is unchanged on disk; other parts of the file changed.' : 'This tunnel was changed on disk.')
      : 'This tunnel is no longer in the file.';
  box.replaceChildren(
    h('p', null, h('strong', null, 'The file changed on disk since you opened this form. '), data.error.message.replace(/^the file changed on disk since you loaded it; /, '').replace(/^./, (c) => c.toUpperCase()) + '.'),
    h('p', null, explain),
    h('div', { class: 'compare' },
      h('div', null, h('h3', null, 'Your edit'), compareList(mine, theirs ? theirs.fields : null)),
      h('div', null, h('h3', null, 'On disk now'), theirs ? compareList(theirs.fields, mine) : h('p', { class: 'muted' }, e.index === null ? '(a new tunnel)' : '(gone)'))),
    h('div', { class: 'conflict-actions' }, useMine, useTheirs));
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
  // The list behind the dialog shows the file as it is now.
  setConfig(data.current, true);
}

$('delete').addEventListener('click', async () => {
  const e = state.editing;
  if (!e || e.index === null) return;
  const name = $('f-name').value || 'unnamed';
  if (!(await confirmDialog(`Delete ${name}?`, 'The tunnel is removed from the config file and the daemon stops it.', 'Delete'))) return;
  const r = await api('DELETE', `/api/tunnels/${e.index}`, { version: e.version, hash: e.hash });
  if (r.ok) {
    $('editor').close();
    state.editing = null;
    setConfig(r.data.config);
    toast(`Deleted ${name}`);
    return;
  }
  if (r.data && r.data.error && r.data.error.code === 'conflict') showConflict(r.data, formFields());
  else showErrors({}, [messageOf(r)]);
});

$('add').addEventListener('click', () => openEditor(null));

// --- live state -------------------------------------------------------------------------------

function setConfig(config, keepEditor) {
  state.config = config;
  if (!keepEditor && state.editing && $('editor').open === false) state.editing = null;
  render();
}

async function loadConfig() {
  const r = await api('GET', '/api/config');
  if (!r.ok) { if (r.status !== 401) toast(messageOf(r), true); return false; }
  state.mode = r.data.mode;
  state.directions = r.data.directions;
  setConfig(r.data.config, true);
  return true;
}

function connectEvents() {
  if (state.events) state.events.close();
  const es = new EventSource('/api/events');
  state.events = es;
  es.addEventListener('snapshot', (ev) => {
    const s = JSON.parse(ev.data);
    state.daemon = s.daemon;
    state.health = s.health;
    state.statuses = new Map(s.statuses.map((r) => [r.hash, r]));
    render();
  });
  es.addEventListener('status', (ev) => {
    const rec = JSON.parse(ev.data);
    state.statuses.set(rec.hash, rec);
    renderStatus(rec);
  });
  es.addEventListener('reload', () => { loadConfig(); });
  es.addEventListener('error', async () => {
    if (es.readyState !== EventSource.CLOSED) return;
    // The stream was refused (session expired?): ask, then reconnect or log in.
    const r = await api('GET', '/api/session');
    if (r.ok && r.data.authenticated) setTimeout(connectEvents, 2000);
    else showLogin();
  });
}

async function start() {
  const s = await api('GET', '/api/session');
  if (!s.ok) { $('loading').textContent = messageOf(s); return; }
  if (!s.data.authenticated) { showLogin(); return; }
  $('logout').hidden = !s.data.password_required;
  if (!(await loadConfig())) return;
  showOnly('app');
  connectEvents();
}

start();
