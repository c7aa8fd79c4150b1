import type { IncomingMessage } from 'node:http';

/** Why a request body could not be read. */
export type BodyFailure = { reason: 'too_large'; limit: number } | { reason: 'client_closed' };

/**
 * Reads the whole request body, up to `limit` bytes. A declared Content-Length over
 * the limit is refused before a byte is read; a body that grows past it is refused as
 * soon as it does, and the rest is not read.
 */
export function readBody(req: IncomingMessage, limit: number, done: (body: Buffer | BodyFailure) => void): void {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    done({ reason: 'too_large', limit });
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (result: Buffer | BodyFailure): void => {
    if (settled) return;
    settled = true;
    req.off('data', onData);
    done(result);
  };
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      req.pause();
      settle({ reason: 'too_large', limit });
      return;
    }
    chunks.push(chunk);
  };
  req.on('data', onData);
  req.on('end', () => settle(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
  req.on('error', () => settle({ reason: 'client_closed' }));
  // 'close' before 'end' means the client went away mid-body.
  req.on('close', () => settle({ reason: 'client_closed' }));
}
