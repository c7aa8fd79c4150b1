// Talking to the panel's own /api. Every state-changing request carries the panel's
// header (the server refuses foreign origins); a 401 asks the page to show the login.

export async function api(method, path, body) {
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
  if (res.status === 401 && data && data.error && data.error.code === 'login_required') document.dispatchEvent(new Event('panel:login-required'));
  return { ok: res.ok, status: res.status, data };
}
