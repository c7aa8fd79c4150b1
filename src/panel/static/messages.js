// Errors and problems in the page's language. The panel and the daemon answer with a
// code (and the values that go in); the catalogue words it (error.<code>,
// problem.<code>) and the code stays visible beside the sentence, for a search or a
// bug report. A code the catalogue does not know keeps the server's English words,
// inside a translated frame.
import { has, t } from './i18n.js';

/** "Sentence (code)", punctuated as the language does it. */
export const withCode = (text, code) => t('error.with_code', { text, code });

/** An error code and its values as a sentence; `fallback` is the server's message. */
export function codeText(code, params, fallback) {
  const key = `error.${code}`;
  return has(key) ? t(key, params || {}) : t('error.unknown', { message: fallback || code });
}

/** The error of a failed call to the panel's /api (see api.js), with its code. */
export function errorText(r) {
  const e = r.data && r.data.error;
  if (!e) return r.status === 0 ? withCode(t('error.offline'), 'offline') : withCode(t('error.http_status', { status: r.status }), `HTTP ${r.status}`);
  return withCode(codeText(e.code, r.data.params, e.message), e.code);
}

/** One problem of the config file: the rule it breaks, in words, with its code. */
export function problemText(p) {
  const key = `problem.${p.code}`;
  const what = has(key) ? t(key, p.params) : t('problem.invalid_value', { expected: p.message, found: '' });
  return withCode(what, p.code);
}

/** The same, with where it is (line, column, field). */
export function problemWhere(p) {
  const text = problemText(p);
  return p.line > 0 ? t('problem.at', { line: p.line, column: p.column, field: p.field, text }) : t('problem.in', { field: p.field, text });
}

/**
 * What a tunnel opens beyond this machine (SPEC §5), from the parts the server's rule
 * gives (src/tunnel/exposure.ts): who can reach what, in the page's language.
 */
export function exposureSentence(x) {
  const who = t(`exposure.who.${x.reach}`, { server: x.server });
  const values = { listen: x.listen, server: x.server, target: x.target || '', who };
  switch (x.kind) {
    case 'open_listener':
      if (x.flag === '-D') return t(x.all ? 'exposure.socks_all' : 'exposure.socks_address', values);
      return t(x.all ? 'exposure.listen_all' : 'exposure.listen_address', values);
    case 'remote_all':
      return t('exposure.remote_all', values);
    case 'own_listener':
      return t(x.flag === '-R' ? 'exposure.own_listener_server' : 'exposure.own_listener_here', { ...values, listener: t(`exposure.listener.${x.listener}`), address: x.address });
    default:
      return x.message;
  }
}
