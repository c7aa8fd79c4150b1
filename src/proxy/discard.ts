import type { IncomingMessage, ServerResponse } from 'node:http';
import { discardRest } from '../http-listener.js';
import { sendError, tooLarge, type ErrorFamily } from './errors.js';

/** Answers 413 for a body found too large while it is still coming, and drops the rest of it. */
export function refuseTooLarge(req: IncomingMessage, res: ServerResponse, requestId: string, limit: number, family: ErrorFamily = 'openai'): void {
  sendError(res, requestId, tooLarge(limit), false, family);
  discardRest(req, limit);
}
