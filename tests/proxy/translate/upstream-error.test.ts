// A provider's error answer, in whichever shape its server writes, as the message of
// the error a translated request's client gets (status kept).
import { describe, expect, it } from 'vitest';
import { upstreamError } from '../../../src/proxy/translate/upstream-error.js';

describe('a provider\'s error, read from its shape', () => {
  it.each<[string, number, string, string, string]>([
    ['OpenAI\'s', 400, JSON.stringify({ error: { message: 'bad field', type: 'invalid_request_error' } }), 'bad field', 'invalid_request_error'],
    ['Anthropic\'s', 529, JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), 'Overloaded', 'upstream_error'],
    ['vLLM\'s', 400, JSON.stringify({ object: 'error', message: 'max_tokens is too large', type: 'BadRequestError', code: 400 }), 'max_tokens is too large', 'invalid_request_error'],
    ['FastAPI\'s', 404, JSON.stringify({ detail: 'Not Found' }), 'Not Found', 'invalid_request_error'],
    ['plain text', 502, 'Bad Gateway', 'Bad Gateway', 'upstream_error'],
    ['a refused key', 401, JSON.stringify({ error: { message: 'invalid key' } }), 'invalid key', 'authentication_error'],
  ])('%s', (_, status, body, message, type) => {
    expect(upstreamError(status, body, 'gpu')).toEqual({ status, type, code: 'upstream_error', message: `provider "gpu" answered ${status}: ${message}` });
  });
});
