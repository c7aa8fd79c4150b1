import zlib from 'node:zlib';
import { err, ok, type Result } from '../../kernel/result.js';
import { tooLarge, type ProxyError } from '../errors.js';

/**
 * A request body sent with `content-encoding` (some clients and gateways compress
 * large prompts) is decompressed before anything reads it: the UTF-8 and JSON checks
 * and the model splice work on the text, and the provider gets that text without
 * `content-encoding`, since model servers (vLLM, llama.cpp, Ollama) do not decode
 * request bodies. The body limit holds for the decompressed size, so a small bomb
 * cannot make the proxy hold gigabytes. An encoding the proxy cannot read is a 415
 * that names it, never a misleading "not valid UTF-8".
 */
export function decodeRequestBody(
  bytes: Buffer,
  contentEncoding: string,
  limit: number,
  done: (body: Result<Buffer, ProxyError>) => void,
): void {
  const encoding = bodyEncoding(contentEncoding);
  if (encoding.kind === 'identity') return done(ok(bytes));
  if (encoding.kind === 'opaque') {
    return done(
      err({
        status: 415,
        type: 'invalid_request_error',
        code: 'unsupported_encoding',
        message: `the request body's content-encoding ${JSON.stringify(encoding.name.slice(0, 100))} is not one the proxy reads; send it uncompressed, or as gzip, deflate or br`,
      }),
    );
  }
  const { name } = encoding;
  const options = { maxOutputLength: limit };
  const finish = (e: Error | null, out: Buffer): void => {
    if (e === null) return done(ok(out));
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      return done(err(tooLarge(limit, name)));
    }
    done(err({ status: 400, type: 'invalid_request_error', code: 'invalid_encoding', message: `the request body does not decode as ${name} (its content-encoding): ${e.message}` }));
  };
  if (name === 'gzip') zlib.gunzip(bytes, options, finish);
  else if (name === 'br') zlib.brotliDecompress(bytes, options, finish);
  else if (isZlibWrapped(bytes)) zlib.inflate(bytes, options, finish);
  else zlib.inflateRaw(bytes, options, finish);
}

/** How a body is encoded, from its `content-encoding`: one the proxy decodes, none, or one it cannot read. */
export type BodyEncoding = { kind: 'identity' } | { kind: 'decodable'; name: 'gzip' | 'deflate' | 'br' } | { kind: 'opaque'; name: string };

const IDENTITY: BodyEncoding = { kind: 'identity' };

export function bodyEncoding(contentEncoding: string | undefined): BodyEncoding {
  // The usual answer, without a string operation or an allocation.
  if (contentEncoding === undefined) return IDENTITY;
  const name = contentEncoding.trim().toLowerCase();
  if (name === '' || name === 'identity') return IDENTITY;
  if (name === 'gzip' || name === 'x-gzip') return { kind: 'decodable', name: 'gzip' };
  if (name === 'deflate') return { kind: 'decodable', name: 'deflate' };
  if (name === 'br') return { kind: 'decodable', name: 'br' };
  // Several codings stacked ("gzip, br"), zstd, …: left as they are.
  return { kind: 'opaque', name };
}

/**
 * "deflate" should be zlib-wrapped (RFC 9110), but some servers and clients send raw
 * deflate; a zlib header's first byte has 8 (deflate) in its low nibble.
 */
export function isZlibWrapped(first: Buffer): boolean {
  return first.length > 0 && ((first[0] ?? 0) & 0x0f) === 0x08;
}
