// The add/edit form: the server validates with the daemon's own code and answers
// with errors per field, or with a conflict when the file changed on disk.
import { api, messageOf } from './api.js';
import { $, confirmDialog, h, sentence, toast } from './dom.js';
import { setConfig } from './list.js';
import { FIELDS, state } from './state.js';

function directionHints(direction) {
  const choice = state.directions.find((d) => d.value === direction);
  const exposes = choice && choice.label.includes('-R');
  const socks = choice && choice.label.includes('-D');
  $('hint-remote_port').textContent = socks ? 'Leave empty: a SOCKS proxy connects wherever its clients ask.' : exposes ? 'Opened on the remote host; "ip:port" binds an address.' : 'The service on the remote side; "host:port" as seen from the remote host.';
  $('hint-local_port').textContent = exposes ? 'The local service; "host:port" to reach another machine.' : 'Where it listens here; "ip:port" binds an address.';
}

function renderDirections(selected) {
  $('f-direction').replaceChildren(...state.directions.map((d) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'direction', value: d.value, checked: d.value === selected, onchange: () => directionHints(d.value) }),
    h('span', null, d.label.replace(/ \(ssh -[LRD]\)$/, ''), h('small', null, `${d.value} · ${d.label.match(/ssh -[LRD]/)?.[0] || ''}`)))));
  directionHints(selected);
}

const HC = { type: 'f-health_check', interval: 'f-hc-interval', failures: 'f-hc-failures', path: 'f-hc-path' };

/** The form's health_check: null for none; undefined when the entry's is not a map (left as written). */
function healthCheckFields() {
  if ($('health-check').disabled) return undefined;
  const out = {};
  for (const [k, id] of Object.entries(HC)) out[k] = $(id).value.trim();
  return out.type === '' ? null : out;
}

function fillHealthCheck(entry) {
  const hc = (entry && entry.health_check) || { type: '', interval: '', failures: '', path: '' };
  for (const [k, id] of Object.entries(HC)) $(id).value = hc[k] || '';
  // A health_check the form cannot read (not a map) is kept as written, never overwritten.
  $('health-check').disabled = Boolean(entry && !entry.health_check && entry.other_keys.includes('health_check'));
}

function clearErrors() {
  $('err-health_check').hidden = true;
  $('f-health_check').removeAttribute('aria-invalid');
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
    p.textContent = sentence(msg);
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

export function openEditor(entry) {
  clearErrors();
  state.editing = entry ? { index: entry.index, hash: entry.hash, version: state.config.version } : { index: null, hash: null, version: state.config.version };
  $('editor-title').textContent = entry ? `Edit ${entry.fields.name || 'unnamed'}` : 'Add tunnel';
  $('delete').hidden = !entry;
  fillForm(entry ? entry.fields : { direction: 'remote_to_local' });
  fillHealthCheck(entry);
  const kept = entry && entry.other_keys.length > 0;
  $('kept-keys').hidden = !kept;
  // A merge key (<<: *defaults) brings fields the form shows as this tunnel's own.
  const merge = kept && entry.other_keys.includes('<<') ? ' The fields the merge key << brings are shown above: one you change is written in this tunnel only, the others stay merged.' : '';
  if (kept) $('kept-keys').textContent = `Also in the file, kept as they are: ${entry.other_keys.join(', ')}.${merge}`;
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
  const hc = healthCheckFields();
  if (hc !== undefined) body.health_check = hc;
  const r = e.index === null
    ? await api('POST', '/api/tunnels', { ...body, hash: null })
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
