// The one place a person's terminal meets an interactive tunnel's ssh. A tunnel has
// one slot: at most one terminal attached, bound to whichever ssh currently waits for
// a login (a fresh ssh may replace a stale one while the person stays attached).
// What passes through is never kept beyond the ssh's own screen replay.
import { err, ok, type Result } from '../../kernel/result.js';
import type { LoginTerminal } from './pty-process.js';
import type { Attachment, LoginOutcome, TerminalSink } from '../types.js';

export class LoginSlot {
  private sink: TerminalSink | null = null;
  /** Who attached the terminal (a tunnel's hash): a shared login's slot is settled by that tunnel. */
  private attachedBy: string | null = null;
  private terminal: LoginTerminal | null = null;
  private stopForwarding: (() => void) | null = null;
  private size: { cols: number; rows: number } | null = null;

  get attached(): boolean {
    return this.sink !== null;
  }

  /** The hash the attached terminal came through; null while none is attached. */
  get owner(): string | null {
    return this.sink === null ? null : this.attachedBy;
  }

  /** Attaches `sink` (through tunnel `owner`) unless another terminal is attached; it first sees the prompt now shown. */
  attach(sink: TerminalSink, owner: string): Result<Attachment, 'busy'> {
    if (this.sink !== null) return err('busy');
    this.sink = sink;
    this.attachedBy = owner;
    this.size = null;
    const screen = this.terminal?.screen() ?? '';
    if (screen !== '') sink.output(screen);
    const mine = () => this.sink === sink;
    return ok({
      input: (data) => {
        if (mine()) this.terminal?.write(data);
      },
      resize: (cols, rows) => {
        if (!mine()) return;
        this.size = { cols, rows };
        this.terminal?.resize(cols, rows);
      },
      detach: () => {
        if (mine()) this.sink = null;
      },
    });
  }

  /** The ssh whose terminal the slot shows now (null: none is running). */
  bind(terminal: LoginTerminal | null): void {
    if (terminal === this.terminal) return;
    this.stopForwarding?.();
    this.stopForwarding = null;
    this.terminal = terminal;
    if (terminal === null) return;
    if (this.size !== null) terminal.resize(this.size.cols, this.size.rows);
    const screen = terminal.screen();
    if (screen !== '') this.sink?.output(screen);
    this.stopForwarding = terminal.onData((text) => this.sink?.output(text));
  }

  /** The ssh behind `terminal` is gone: the slot shows nothing until the next one. */
  release(terminal: LoginTerminal): void {
    if (this.terminal === terminal) this.bind(null);
  }

  /** Ends the attached terminal's session with `outcome` (the terminal is then free). */
  end(outcome: LoginOutcome): void {
    const sink = this.sink;
    this.sink = null;
    sink?.end(outcome);
  }
}
