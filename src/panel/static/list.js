// The tunnel list: cards with live status, banners about the file and the daemon,
// start and stop.
import { api, messageOf } from './api.js';
import { $, confirmDialog, h, sentence, toast } from './dom.js';
import { openEditor } from './editor.js';
import { STATE_WORDS, state } from './state.js';
import { openTerminal } from './terminal.js';

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

function statusOf(entry) {
  const leftOut = (state.config.rejected || []).includes(entry.index);
  const st = entry.hash ? state.statuses.get(entry.hash) : undefined;
  // A running tunnel whose entry now has a problem keeps running as it was.
  if (st) return st;
  if (leftOut) return { status: 'LEFT_OUT' };
  if (!state.daemon.reachable) return { status: 'UNKNOWN' };
  if (!state.config.valid && state.config.applied !== 'partial') return { status: 'NOT_APPLIED' };
  return { status: 'PENDING' };
}

function statusLine(st) {
  const meta = [];
  if (st.since) meta.push(h('span', { 'data-time': '' }, timeText(st)));
  if (typeof st.restarts === 'number') meta.push(h('span', null, `${st.restarts} restart${st.restarts === 1 ? '' : 's'}`));
  if (st.pid) meta.push(h('span', null, `pid ${st.pid}`));
  if (st.status === 'UNKNOWN') meta.push(h('span', null, 'daemon not reachable'));
  if (st.status === 'NOT_APPLIED') meta.push(h('span', null, 'the file is invalid; the daemon keeps the last good config'));
  if (st.status === 'LEFT_OUT') meta.push(h('span', null, 'this entry has a problem (see above); the daemon leaves it out'));
  if (st.status === 'PENDING') meta.push(h('span', null, 'waiting for the daemon to reload'));
  return meta;
}

/** Health while RUNNING (SPEC §5): a RUNNING tunnel that carries nothing says so, and why. */
function healthLine(st) {
  if (st.status !== 'RUNNING' || !st.health) return null;
  const { state: hs, reason } = st.health;
  return h('p', { class: 'tunnel-health', 'data-health': hs, 'data-testid': 'health' },
    h('span', { class: 'health-dot', 'aria-hidden': 'true' }), `health ${hs}`, reason ? `: ${reason}` : '');
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
  // Follow the newest lines unless the user scrolled up to read older ones.
  const follow = !pre.dataset.shown || pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
  pre.dataset.shown = '1';
  pre.textContent = text;
  if (follow) pre.scrollTop = pre.scrollHeight;
}

function card(entry, stale) {
  const st = stale ? entry.status : statusOf(entry);
  const f = entry.fields;
  const running = st.status === 'RUNNING' || st.status === 'STARTING' || st.status === 'RETRYING' || st.status === 'AUTH_REQUIRED';
  const known = Boolean(entry.hash && state.statuses.has(entry.hash));
  const actions = [];
  if (known && st.status === 'AUTH_REQUIRED') {
    actions.push(h('button', { class: 'btn btn-small btn-primary', type: 'button', 'data-testid': 'login', onclick: () => openTerminal(entry.hash, f.name || 'unnamed') }, 'Log in'));
  }
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
      st.status === 'AUTH_REQUIRED' ? h('p', { class: 'tunnel-login', 'data-testid': 'login-needed' }, 'Waiting for a person to log in (a password or a one-time code).') : null,
      healthLine(st),
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
  if (c && !c.valid && c.applied === 'partial') {
    const n = c.rejected.length;
    out.push(h('div', { class: 'banner banner-warn', 'data-testid': 'config-partial' },
      h('strong', null, n > 0 ? `${n} ${n === 1 ? 'entry has' : 'entries have'} problems and ${n === 1 ? 'is' : 'are'} left out` : 'The file has problems'),
      'The other tunnels run. Nothing running is stopped or changed until the file has no problems.',
      h('ul', null, c.problems.map((p) => h('li', null, p.message)))));
  } else if (c && !c.valid) {
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

export function render() {
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
export function renderStatus(rec) {
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

/** A new view of the file (after a save, a reload or a conflict) redraws the list. */
export function setConfig(config, keepEditor) {
  state.config = config;
  if (!keepEditor && state.editing && $('editor').open === false) state.editing = null;
  render();
}
