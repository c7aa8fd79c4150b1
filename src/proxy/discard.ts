import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, tooLarge, type ErrorFamily } from './errors.js';

// How much of a refused body is read and thrown away, and for how long, before the
// connection is cut anyway.
const DISCARD_BYTES_FACTOR = 4;
const DISCARD_MS = 10_000;

/**
 * Reads and drops the rest of a refused body, bounded. Closing at once would make a
 * client that is still sending (no `Expect: 100-continue`) fail with EPIPE before it
 * reads the 413; reading forever would let a client hold the connection.
 */
export function discardRest(req: IncomingMessage, limit: number): void {
  let dropped = 0;
  const cut = setTimeout(() => req.socket.destroy(), DISCARD_MS);
  cut.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_BYTES_FACTOR * limit) req.socket.destroy();
  });
  req.once('close', () => clearTimeout(cut));
  req.resume();
}

/** Answers 413 for a body found too large while it is still coming, and drops the rest of it. */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse, requestId: string, limit: number, family: ErrorFamily = 'openai'): void {
  sendError(res, requestId, tooLarge(limit), false, family);
  discardRest(req, limit);
}
