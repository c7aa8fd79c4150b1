// The tunnel list: cards with live status, banners about the file and the daemon,
// start and stop.
import { api } from './api.js';
import { $, confirmDialog, h, toast } from './dom.js';
import { openEditor } from './editor.js';
import { format, t } from './i18n.js';
import { codeText, errorText, exposureSentence, problemWhere, withCode } from './messages.js';
import { answerIsNewest, state, statusMark } from './state.js';
import { openTerminal } from './terminal.js';

/** A state's words: the code (RUNNING) stays in data-state; the words are the language's. */
export const stateWords = (status) => t(`status.${status}`);

/** What a tunnel does, from the server's parts, in the page's language. */
export function tunnelSentence(words, f) {
  if (!words) return t('describe.unknown', { direction: f.direction, host: f.remote_host, remote: f.remote_port, local: f.local_port });
  if (words.kind === 'socks') return t('describe.socks', words);
  if (words.kind === 'expose') return t(words.bind !== null ? 'describe.expose_bound' : 'describe.expose', words);
  return t(words.via !== null ? 'describe.bring_via' : 'describe.bring', words);
}

function timeText(st) {
  const now = Date.now();
  if (st.status === 'RUNNING') return t('time.up', { duration: format.duration(now - Date.parse(st.since)) });
  if (st.status === 'RETRYING' && st.next_retry_at) {
    const left = Date.parse(st.next_retry_at) - now;
    return left > 0 ? t('time.next_try', { when: format.fromNow(left) }) : t('time.trying_now');
  }
  return t('time.in_state', { state: stateWords(st.status), duration: format.duration(now - Date.parse(st.since)) });
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
  if (st.since) meta.push(h('time', { 'data-time': '', datetime: st.since, title: format.dateTime(st.since) }, timeText(st)));
  if (typeof st.restarts === 'number') meta.push(h('span', null, t('card.restarts', { count: format.number(st.restarts) })));
  if (st.pid) meta.push(h('span', null, t('card.pid', { pid: st.pid })));
  if (st.status === 'UNKNOWN') meta.push(h('span', null, t('card.unknown')));
  if (st.status === 'NOT_APPLIED') meta.push(h('span', null, t('card.not_applied')));
  if (st.status === 'LEFT_OUT') meta.push(h('span', null, t('card.left_out')));
  if (st.status === 'PENDING') meta.push(h('span', null, t('card.pending')));
  return meta;
}

/** Health while RUNNING (SPEC §5): a RUNNING tunnel that carries nothing says so, and why. */
function healthLine(st) {
  if (st.status !== 'RUNNING' || !st.health) return null;
  const { state: hs, reason } = st.health;
  return h('p', { class: 'tunnel-health', 'data-health': hs, 'data-testid': 'health' },
    h('span', { class: 'health-dot', 'aria-hidden': 'true' }), t(`health.${hs === 'ok' || hs === 'degraded' ? hs : 'unknown'}`),
    reason ? h('span', { class: 'detail' }, t('card.detail', { text: reason })) : '');
}

/** What the tunnel opens beyond this machine: told on its card, never refused (the user may mean it). */
export function exposureList(list, testid) {
  if (!list || list.length === 0) return null;
  return h('div', { class: 'exposure', 'data-testid': testid, role: 'note' },
    h('strong', null, t('exposure.label')),
    h('ul', null, list.map((x) => h('li', { 'data-kind': x.kind }, exposureSentence(x)))));
}

function badge(status) {
  return h('span', { class: 'badge', 'data-state': status, 'data-testid': 'status', title: status }, stateWords(status));
}

function logsBlock(hash) {
  // The box scrolls: it takes the focus (tabindex) so a keyboard can scroll it, and is named for a screen reader.
  const pre = h('pre', { 'data-testid': 'logs', tabindex: '0', role: 'region', 'aria-label': t('logs.label') }, state.logs.get(hash) || t('page.loading'));
  const refresh = h('button', { class: 'btn btn-quiet btn-small', type: 'button', onclick: () => loadLogs(hash, pre) }, t('logs.refresh'));
  const details = h('details', { class: 'logs' }, h('summary', null, t('logs.summary')), pre, h('div', { class: 'logs-foot' }, refresh));
  if (state.openLogs.has(hash)) details.open = true;
  details.addEventListener('toggle', () => {
    if (details.open) { state.openLogs.add(hash); loadLogs(hash, pre); } else state.openLogs.delete(hash);
  });
  return details;
}

// Each status event of an open card reads its lines again; reads may overlap and answer
// out of order, so only the last one asked for a tunnel is shown.
const logReads = new Map();

async function loadLogs(hash, pre) {
  const read = (logReads.get(hash) ?? 0) + 1;
  logReads.set(hash, read);
  const r = await api('GET', `/api/daemon/logs/${hash}`);
  if (logReads.get(hash) !== read) return;
  const text = r.ok ? (r.data.lines.length > 0 ? r.data.lines.join('\n') : t('logs.empty')) : errorText(r);
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
  const name = f.name || t('card.unnamed');
  const actions = [];
  if (known && st.status === 'AUTH_REQUIRED') {
    actions.push(h('button', { class: 'btn btn-small btn-primary', type: 'button', 'data-testid': 'login', onclick: () => openTerminal(entry.hash, name) }, t('card.login')));
  }
  // Buttons name their tunnel for a screen reader: "Stop" alone is ambiguous in a list.
  const named = (key) => ({ 'aria-label': t(`${key}_named`, { name }) });
  if (known) {
    actions.push(running
      ? h('button', { class: 'btn btn-small', type: 'button', ...named('card.stop'), onclick: () => control('stop', entry) }, t('card.stop'))
      : h('button', { class: 'btn btn-small', type: 'button', ...named('card.start'), onclick: () => control('start', entry) }, t('card.start')));
  }
  if (!stale && !state.config.not_editable) {
    actions.push(h('button', { class: 'btn btn-small', type: 'button', ...named('card.edit'), onclick: () => openEditor(entry) }, t('card.edit')));
  }
  const tags = [];
  if (entry.interactive) tags.push(h('span', { class: 'tag', title: t('card.interactive_hint') }, t('card.interactive')));
  if (stale) tags.push(h('span', { class: 'tag' }, t('card.not_in_file')));
  const li = h('li', { class: 'tunnel card', 'data-hash': entry.hash || '', 'data-name': f.name || 'unnamed', 'data-testid': 'tunnel' },
    h('div', { class: 'tunnel-main' },
      h('div', { class: 'tunnel-title' }, h('span', { class: 'tunnel-name' }, name), badge(st.status), tags),
      h('p', { class: 'tunnel-what', 'data-testid': 'description' }, tunnelSentence(entry.words, f)),
      stale ? null : exposureList(entry.exposure, 'exposure'),
      h('p', { class: 'tunnel-meta' },
        h('code', { title: t('form.remote_host') }, f.remote_host),
        statusLine(st),
        entry.hash ? h('code', { title: t('card.hash') }, entry.hash.slice(0, 8)) : null),
      st.status === 'AUTH_REQUIRED' ? h('p', { class: 'tunnel-login', 'data-testid': 'login-needed' }, t('card.login_needed')) : null,
      healthLine(st),
      st.last_error ? h('p', { class: 'tunnel-error', 'data-testid': 'last-error' }, t('card.last_error', { text: st.last_error })) : null),
    h('div', { class: 'tunnel-actions' }, actions),
    known ? logsBlock(entry.hash) : null);
  li._status = st;
  return li;
}

const problemList = (problems) => h('ul', null, problems.map((p) => h('li', null, problemWhere(p))));

function renderBanners() {
  const out = [];
  const c = state.config;
  const d = state.daemon;
  if (!d.reachable) {
    // Why the panel cannot talk to the daemon, and what to do: each cause has its own sentence.
    out.push(h('div', { class: 'banner banner-warn', 'data-testid': 'daemon-banner', 'data-code': d.code || '' },
      h('strong', null, t('banner.daemon_title')),
      h('span', { 'data-testid': 'daemon-reason' }, withCode(codeText(d.code, { where: d.where, ...d.params }, d.message), d.code)),
      h('div', { class: 'small' }, t('banner.daemon_edit'))));
  }
  if (c && c.missing) {
    out.push(h('div', { class: 'banner banner-info' }, h('strong', null, t('banner.missing_title')), t('banner.missing_text')));
  }
  if (c && !c.valid && c.applied === 'partial') {
    const n = c.rejected.length;
    out.push(h('div', { class: 'banner banner-warn', 'data-testid': 'config-partial' },
      h('strong', null, n > 0 ? t('banner.partial_title', { count: format.number(n) }) : t('banner.problems_title')),
      t('banner.partial_text'),
      problemList(c.problems)));
  } else if (c && !c.valid) {
    out.push(h('div', { class: 'banner banner-danger', 'data-testid': 'config-invalid' },
      h('strong', null, t('banner.invalid_title')),
      t('banner.invalid_text'),
      problemList(c.problems)));
  } else if (state.health && !state.health.valid && d.reachable) {
    out.push(h('div', { class: 'banner banner-warn' }, h('strong', null, t('banner.daemon_invalid_title')),
      state.health.error ? h('div', { class: 'detail' }, t('card.detail', { text: state.health.error })) : ''));
  }
  if (c && c.not_editable) {
    out.push(h('div', { class: 'banner banner-warn' }, h('strong', null, t('banner.not_editable_title')),
      h('div', { class: 'detail' }, withCode(t('error.not_editable'), 'not_editable')), h('div', { class: 'detail' }, t('card.detail', { text: c.not_editable }))));
  }
  if (c && c.warnings.length > 0) {
    out.push(h('details', { class: 'banner banner-info banner-fold' },
      h('summary', null, t('banner.warnings', { count: format.number(c.warnings.length) })),
      problemList(c.warnings)));
  }
  $('banners').replaceChildren(...out);
}

function renderDaemonState() {
  const d = state.daemon;
  // The state is told in words; the dot only repeats it.
  $('daemon-state').replaceChildren(
    h('span', { class: d.reachable ? 'dot ok' : 'dot bad', 'aria-hidden': 'true' }),
    h('span', null, d.reachable ? t('daemon.connected') : t('daemon.not_reachable')));
  $('daemon-state').title = d.reachable ? d.where : codeText(d.code, { where: d.where, ...d.params }, d.message);
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
  $('count').textContent = c.entries.length > 0 ? format.number(c.entries.length) : '';
  $('add').disabled = Boolean(c.not_editable);
  const inFile = new Set(c.entries.map((e) => e.hash));
  const stale = [...state.statuses.values()].filter((s) => !inFile.has(s.hash));
  $('stale-section').hidden = stale.length === 0;
  $('stale').replaceChildren(...stale.map((s) => card({
    hash: s.hash, fields: { name: s.name, remote_host: s.remote_host, remote_port: s.remote_port, local_port: s.local_port, direction: s.direction },
    words: s.words, interactive: false, status: s,
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
  const mark = statusMark();
  const r = await api('POST', `/api/daemon/${action}/${entry.hash}`);
  if (!r.ok) { toast(t('toast.tunnel_error', { name: entry.fields.name || t('card.unnamed'), text: errorText(r) }), true); return; }
  if (r.data && r.data.hash && answerIsNewest(mark, r.data.hash)) { state.statuses.set(r.data.hash, r.data); renderStatus(r.data); }
}

async function controlAll(action) {
  const mark = statusMark();
  const r = await api('POST', `/api/daemon/${action}`);
  if (!r.ok) { toast(errorText(r), true); return; }
  if (Array.isArray(r.data)) { for (const s of r.data) if (answerIsNewest(mark, s.hash)) state.statuses.set(s.hash, s); render(); }
}

$('start-all').addEventListener('click', () => controlAll('start'));
$('stop-all').addEventListener('click', async () => {
  if (await confirmDialog(t('confirm.stop_all_title'), t('confirm.stop_all_text'), t('list.stop_all'))) controlAll('stop');
});

/** A new view of the file (after a save, a reload or a conflict) redraws the list. */
export function setConfig(config, keepEditor) {
  state.config = config;
  if (!keepEditor && state.editing && $('editor').open === false) state.editing = null;
  render();
}
