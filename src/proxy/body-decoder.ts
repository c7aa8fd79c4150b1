import zlib from 'node:zlib';

/**
 * Undoes a provider's `content-encoding`, so that what the proxy scans (event
 * boundaries, keys in error bodies) and what it may append (its error event) is plain
 * text. The proxy asks for `accept-encoding: identity`; this is for providers that
 * compress anyway. The client then gets the plain body, without `content-encoding`
 * and `content-length`, so nothing the proxy writes ever lands inside a compressed
 * body.
 */
export interface BodyDecoder {
  write(chunk: Buffer): void;
  /** No more input: `end` (or `error`) follows once the last output is out. */
  end(): void;
  /** Stops at once; no callback follows. */
  destroy(): void;
}

export interface DecodedSink {
  data(chunk: Buffer): void;
  end(): void;
  error(message: string): void;
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
  return first.length > 0 && (first[0]! & 0x0f) === 0x08;
}

// Flushed per chunk so that a streamed event is handed on as soon as its bytes are in.
const FLUSH = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BR_FLUSH = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };

export function createBodyDecoder(name: 'gzip' | 'deflate' | 'br', sink: DecodedSink): BodyDecoder {
  let stream: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress | null = null;
  let over = false;

  function start(first: Buffer): zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress {
    const s =
      name === 'gzip'
        ? zlib.createGunzip(FLUSH)
        : name === 'br'
          ? zlib.createBrotliDecompress(BR_FLUSH)
          : isZlibWrapped(first)
            ? zlib.createInflate(FLUSH)
            : zlib.createInflateRaw(FLUSH);
    s.on('data', (chunk: Buffer) => over || sink.data(chunk));
    s.on('end', () => {
      if (over) return;
      over = true;
      sink.end();
    });
    s.on('error', (e) => {
      if (over) return;
      over = true;
      sink.error(`the provider's ${name} body does not decode: ${e.message}`);
    });
    return s;
  }

  return {
    write(chunk) {
      if (over || chunk.length === 0) return;
      stream ??= start(chunk);
      stream.write(chunk);
    },
    end() {
      if (over) return;
      if (stream === null) {
        over = true;
        sink.end();
        return;
      }
      stream.end();
    },
    destroy() {
      over = true;
      stream?.destroy();
    },
  };
}
