import type { ServerResponse } from 'node:http';

/**
 * Set on a response when the proxy writes an answer of its own, whole (an error, a
 * model list), at performance.now(): the request's record takes it as the time of the
 * answer's first byte, which no relayed piece of body marked. Relayed answers never
 * carry it, so the hot path's responses keep their shape.
 */
const OWN_ANSWER_AT = Symbol('ownAnswerAt');
type Marked = ServerResponse & { [OWN_ANSWER_AT]?: number };

export function markOwnAnswer(res: ServerResponse): void {
  // An answer to HEAD has no body, so no first byte.
  if (res.req?.method === 'HEAD') return;
  (res as Marked)[OWN_ANSWER_AT] = performance.now();
}

/** When the proxy wrote its own answer on `res` (performance.now()), or undefined for a relayed one. */
export function ownAnswerAt(res: ServerResponse): number | undefined {
  return (res as Marked)[OWN_ANSWER_AT];
}
