// The panel's page: plain JavaScript modules, no build step. Everything it shows comes
// from the panel's own /api (the daemon's token never reaches the browser).
import { api } from './api.js';
import { $, toast } from './dom.js';
import { translate } from './i18n.js';
import { errorText } from './messages.js';
import './switches.js';
import { render, renderStatus, setConfig } from './list.js';
import { state } from './state.js';

// The catalogue is loaded (i18n.js awaits it): the static text is set before anything shows.
translate();

// Escape closes a dialog: the browser does so for the others; the terminal emulator
// takes every key for itself, so its dialog is closed here (the login waits).
document.addEventListener('keydown', (ev) => {
  const term = $('terminal');
  if (ev.key !== 'Escape' || !term.open || !term.contains(ev.target)) return;
  // Not passed on: an Escape typed into a password prompt would be part of the answer.
  ev.preventDefault();
  ev.stopPropagation();
  term.close();
}, true);

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
    err.textContent = errorText(r);
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

document.addEventListener('panel:login-required', () => showLogin());

// Reads may overlap (a reload event, the tab coming back): only the last one asked is shown,
// since answers can arrive out of order and an older view must not cover a newer one.
let configReads = 0;

async function loadConfig() {
  const read = ++configReads;
  const r = await api('GET', '/api/config');
  if (read !== configReads) return true;
  if (!r.ok) { if (r.status !== 401) toast(errorText(r), true); return false; }
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
    state.snapshots++;
    render();
  });
  es.addEventListener('status', (ev) => {
    const rec = JSON.parse(ev.data);
    state.statuses.set(rec.hash, rec);
    state.statusEvents.set(rec.hash, (state.statusEvents.get(rec.hash) ?? 0) + 1);
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

// Without the daemon there are no reload events: coming back to the tab re-reads the file.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && state.config && !$('app').hidden) loadConfig();
});

async function start() {
  const s = await api('GET', '/api/session');
  if (!s.ok) { $('loading').textContent = errorText(s); return; }
  if (!s.data.authenticated) { showLogin(); return; }
  $('logout').hidden = !s.data.password_required;
  if (!(await loadConfig())) return;
  showOnly('app');
  connectEvents();
}

start();
