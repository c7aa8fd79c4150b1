// The add/edit form: the server validates with the daemon's own code and answers
// with errors per field, or with a conflict when the file changed on disk.
import { api } from './api.js';
import { $, confirmDialog, h, toast } from './dom.js';
import { t } from './i18n.js';
import { errorText, problemText, problemWhere, withCode } from './messages.js';
import { exposureList, setConfig } from './list.js';
import { FIELDS, state } from './state.js';

const flagOf = (direction) => (state.directions.find((d) => d.value === direction) || {}).flag;

function directionHints(direction) {
  const flag = flagOf(direction);
  const exposes = flag === '-R';
  const remoteKey = flag === '-D' ? 'form.hint_remote_port_socks' : exposes ? 'form.hint_remote_port_expose' : 'form.hint_remote_port_bring';
  $('hint-remote_port').textContent = t(remoteKey);
  $('hint-local_port').textContent = t(exposes ? 'form.hint_local_port_expose' : 'form.hint_local_port_bring');
}

/** A direction's words: the server says which ssh flag it means under the mode; the catalogue words each flag. */
function directionWords(d) {
  if (d.flag === '-R') return t('form.direction_expose');
  if (d.flag === '-L') return t('form.direction_bring');
  if (d.flag === '-D' || d.value === 'socks') return t('form.direction_socks');
  return d.label;
}

function renderDirections(selected) {
  $('f-direction').replaceChildren(...state.directions.map((d) => h('label', { class: 'choice' },
    h('input', { type: 'radio', name: 'direction', value: d.value, checked: d.value === selected, onchange: () => { directionHints(d.value); askExposure(); } }),
    h('span', null, directionWords(d), h('small', { dir: 'ltr' }, `${d.value}${d.flag ? ` · ssh ${d.flag}` : ''}`)))));
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

/** The server's problems, each next to its field (or above the form), in the page's language. */
function showProblems(problems) {
  const fields = {};
  const general = [];
  for (const p of problems) {
    if (p.form_field) (fields[p.form_field] = fields[p.form_field] || []).push(p);
    else general.push(problemWhere(p));
  }
  showErrors(fields, general);
}

function showErrors(fields, general) {
  let first = null;
  for (const [f, problems] of Object.entries(fields)) {
    const p = $(`err-${f}`);
    if (!p) continue;
    p.replaceChildren(...problems.map((x) => h('span', { class: 'problem', 'data-code': x.code }, problemText(x))));
    p.hidden = false;
    const input = f === 'direction' ? document.querySelector('#f-direction input') : $(`f-${f}`);
    if (input && f !== 'direction') input.setAttribute('aria-invalid', 'true');
    first = first || input;
  }
  if (general && general.length > 0) {
    $('form-error').replaceChildren(h('strong', null, t('form.invalid_file')), h('ul', null, general.map((g) => h('li', null, g))));
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

// The form says what the tunnel would open beyond this machine while it is typed in:
// the server answers with its rule (the same as the daemon's), the last question wins.
let exposureAsked = 0;
let exposureTimer = null;

function showExposure(list) {
  const box = $('exposure-note');
  const shown = exposureList(list, 'form-exposure');
  box.replaceChildren(...(shown ? [shown] : []));
  box.hidden = !shown;
}

function askExposure() {
  clearTimeout(exposureTimer);
  exposureTimer = setTimeout(async () => {
    const asked = ++exposureAsked;
    const r = await api('POST', '/api/exposure', { fields: formFields() });
    if (asked === exposureAsked && r.ok) showExposure(r.data.exposure);
  }, 200);
}

for (const f of ['remote_host', 'remote_port', 'local_port']) $(`f-${f}`).addEventListener('input', askExposure);

async function loadSshHosts() {
  const r = await api('GET', '/api/ssh-hosts');
  if (r.ok) $('ssh-hosts').replaceChildren(...r.data.hosts.map((host) => h('option', { value: host })));
}

export function openEditor(entry) {
  clearErrors();
  state.editing = entry ? { index: entry.index, hash: entry.hash, version: state.config.version } : { index: null, hash: null, version: state.config.version };
  $('editor-title').textContent = entry ? t('form.edit_title', { name: entry.fields.name || t('card.unnamed') }) : t('list.add');
  $('delete').hidden = !entry;
  fillForm(entry ? entry.fields : { direction: 'remote_to_local' });
  fillHealthCheck(entry);
  clearTimeout(exposureTimer);
  exposureAsked++;
  showExposure(entry ? entry.exposure : []);
  const kept = entry && entry.other_keys.length > 0;
  $('kept-keys').hidden = !kept;
  // A merge key (<<: *defaults) brings fields the form shows as this tunnel's own.
  const merge = kept && entry.other_keys.includes('<<') ? ` ${t('form.merge_note')}` : '';
  if (kept) $('kept-keys').textContent = t('form.kept_keys', { keys: entry.other_keys.join(', ') }) + merge;
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
    toast(t('toast.saved', { name: body.fields.name || t('card.unnamed') }));
    if (r.data.backup_error) toast(t('toast.backup_failed', { text: r.data.backup_error }), true);
    return;
  }
  const code = r.data && r.data.error && r.data.error.code;
  if (code === 'invalid') showProblems(r.data.problems || []);
  else if (code === 'conflict') showConflict(r.data, body.fields);
  else showErrors({}, [errorText(r)]);
}

function compareList(fields, other) {
  return h('dl', null, FIELDS.flatMap((f) => [
    h('dt', { title: f }, t(`form.${f}`)),
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
  } }, e.index !== null && !theirs ? t('conflict.add_mine') : t('conflict.save_mine'));
  const useTheirs = h('button', { class: 'btn btn-small', type: 'button', onclick: () => {
    setConfig(data.current);
    $('editor').close();
    toast(t('toast.loaded_disk'));
  } }, t('conflict.load_theirs'));
  const explain = e.index === null
    ? t('conflict.new_not_added')
    : theirs
      ? (data.theirs_unchanged ? t('conflict.unchanged') : t('conflict.changed'))
      : t('conflict.gone');
  box.replaceChildren(
    h('p', null, h('strong', null, t('conflict.title')), ' ', withCode(t('conflict.nothing_saved'), 'conflict')),
    h('p', null, explain),
    h('div', { class: 'compare' },
      h('div', null, h('h3', null, t('conflict.yours')), compareList(mine, theirs ? theirs.fields : null)),
      h('div', null, h('h3', null, t('conflict.theirs')), theirs ? compareList(theirs.fields, mine) : h('p', { class: 'muted' }, e.index === null ? t('conflict.a_new_tunnel') : t('conflict.none')))),
    h('div', { class: 'conflict-actions' }, useMine, useTheirs));
  box.hidden = false;
  box.scrollIntoView({ block: 'nearest' });
  // The list behind the dialog shows the file as it is now.
  setConfig(data.current, true);
}

$('delete').addEventListener('click', async () => {
  const e = state.editing;
  if (!e || e.index === null) return;
  const name = $('f-name').value || t('card.unnamed');
  if (!(await confirmDialog(t('confirm.delete_title', { name }), t('confirm.delete_text'), t('form.delete')))) return;
  const r = await api('DELETE', `/api/tunnels/${e.index}`, { version: e.version, hash: e.hash });
  if (r.ok) {
    $('editor').close();
    state.editing = null;
    setConfig(r.data.config);
    toast(t('toast.deleted', { name }));
    return;
  }
  if (r.data && r.data.error && r.data.error.code === 'conflict') showConflict(r.data, formFields());
  else showErrors({}, [errorText(r)]);
});

$('add').addEventListener('click', () => openEditor(null));
