import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardRest } from '../../edge/http-listener.js';
import { sendError, tooLarge, type ErrorFamily } from '../errors.js';

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
  new BodyReader(req, limit, done).listen();
}

/** One body being read: an object with bound methods rather than a closure per event. */
class BodyReader {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly limit: number,
    private readonly done: (body: Buffer | BodyFailure) => void,
  ) {}

  listen(): void {
    const { req } = this;
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('error', this.onGone);
    // 'close' before 'end' means the client went away mid-body.
    req.on('close', this.onGone);
  }

  private settle(result: Buffer | BodyFailure): void {
    if (this.settled) return;
    this.settled = true;
    this.req.off('data', this.onData);
    this.done(result);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.req.pause();
      this.settle({ reason: 'too_large', limit: this.limit });
      return;
    }
    this.chunks.push(chunk);
  };

  private readonly onEnd = (): void => {
    const { chunks } = this;
    const only = chunks.length === 1 ? chunks[0] : undefined;
    this.settle(only ?? Buffer.concat(chunks, this.size));
  };

  private readonly onGone = (): void => this.settle({ reason: 'client_closed' });
}

/** Answers 413 for a body found too large while it is still coming, and drops the rest of it. */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse, requestId: string, limit: number, family: ErrorFamily = 'openai'): void {
  sendError(res, requestId, tooLarge(limit), false, family);
  discardRest(req, limit);
}
