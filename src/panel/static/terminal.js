// A terminal in the page for an interactive tunnel's login (a password, a one-time
// code): xterm.js, served by the panel from its installed package, over a WebSocket
// to the panel, which bridges it to the daemon. Closing the dialog detaches; the
// login goes on and can be resumed.
import { Terminal } from '/vendor/xterm.mjs';
import { FitAddon } from '/vendor/addon-fit.mjs';
import { $ } from './dom.js';
import { format, t } from './i18n.js';
import { codeText, withCode } from './messages.js';

let current = null;

function say(text, tone) {
  const el = $('terminal-status');
  el.textContent = text;
  el.dataset.tone = tone || '';
}

/** Opens the dialog's terminal on `hash`'s login; one at a time in this page (the daemon allows one in all). */
export function openTerminal(hash, name) {
  if (current) current.close();
  const dialog = $('terminal');
  const screen = $('terminal-screen');
  $('terminal-title').textContent = t('terminal.title', { name });
  say(t('terminal.connecting'));
  screen.replaceChildren();
  dialog.showModal();

  const term = new Terminal({ cursorBlink: true, fontSize: 14, scrollback: 500, fontFamily: 'ui-monospace, Menlo, Consolas, monospace' });
  const fit = new FitAddon();
  term.loadAddon(fit);
  term.open(screen);
  // The emulator's input is a hidden textarea: it gets a name in the page's language.
  const input = screen.querySelector('textarea');
  if (input) input.setAttribute('aria-label', t('terminal.input', { name }));
  fit.fit();
  term.focus();

  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/api/terminal/${hash}`);
  ws.binaryType = 'arraybuffer';
  const encoder = new TextEncoder();
  let ended = false;
  const sendSize = () => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'resize', cols: term.cols, rows: term.rows }));
  };
  const refit = () => fit.fit();
  term.onResize(sendSize);
  term.onData((d) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(encoder.encode(d));
  });
  window.addEventListener('resize', refit);

  ws.onopen = sendSize;
  ws.onmessage = (e) => {
    if (typeof e.data !== 'string') {
      term.write(new Uint8Array(e.data));
      return;
    }
    let m;
    try { m = JSON.parse(e.data); } catch { return; }
    if (m.type === 'attached') {
      // The login is the host's, shared by its interactive tunnels: say which others it brings up.
      const others = Array.isArray(m.shared_with) && m.shared_with.length > 0 ? ` ${t('terminal.shared', { names: format.list(m.shared_with) })}` : '';
      say(t('terminal.attached') + others);
    }
    else if (m.type === 'refused') { ended = true; say(withCode(codeText(m.code, m.params, m.message), m.code || 'refused'), 'bad'); }
    else if (m.type === 'end') {
      ended = true;
      if (m.status === 'RUNNING') {
        say(t('terminal.running'), 'ok');
        setTimeout(() => { if (current && current.ws === ws) dialog.close(); }, 1500);
      } else if (m.status === 'STOPPED') say(t('terminal.stopped'), 'bad');
      else say(t('terminal.failed', { text: m.message || 'ssh' }), 'bad');
    }
  };
  ws.onclose = () => {
    if (!ended) say(t('terminal.closed'), 'bad');
    term.options.disableStdin = true;
  };

  const close = () => {
    window.removeEventListener('resize', refit);
    if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close();
    term.dispose();
    current = null;
  };
  current = { ws, close };
  dialog.addEventListener('close', () => { if (current && current.ws === ws) close(); }, { once: true });
}

for (const b of document.querySelectorAll('#terminal [data-close]')) b.addEventListener('click', () => $('terminal').close());
