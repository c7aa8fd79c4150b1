/**
 * The estimate of an answer whose provider reported no usage (docs/proxy.md, "Client
 * keys"): about four bytes a token, for the prompt as the provider got it; for the
 * answer, one token per event (a JSON answer is one), plus one per four bytes an event
 * has beyond the framing every event carries (its ids, model, keys: up to about 256
 * bytes), so that a chunk of one token counts one and a chunk of a whole paragraph
 * counts its text.
 */
const BYTES_PER_TOKEN = 4;
const FRAMING_BYTES = 256;

/** The estimated tokens of a prompt of `bytes` (the request body as the provider got it). */
export const promptTokens = (bytes: number): number => Math.ceil(bytes / BYTES_PER_TOKEN);

/** The estimated tokens of one answer event (or a JSON answer) of `bytes`. */
export const eventTokens = (bytes: number): number => 1 + Math.ceil(Math.max(0, bytes - FRAMING_BYTES) / BYTES_PER_TOKEN);

// The endpoints whose answers are made of tokens: only theirs are estimated when the provider reports none.
const ESTIMATED = new Set(['/chat/completions', '/completions', '/responses', '/messages', '/embeddings']);

/** Whether an answer of `endpoint` (a route label) without usage is estimated for a client's `tpm`. */
export const estimated = (endpoint: string): boolean => ESTIMATED.has(endpoint);

/** Whether an answer of `endpoint` repeats the usage of one that counted already: a stored response read again (`/responses/{id}`, its events, its cancel). */
export const recounted = (endpoint: string): boolean => endpoint.startsWith('/responses/{id}');
