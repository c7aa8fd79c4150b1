import zlib from 'node:zlib';
import { isZlibWrapped } from '../request/body-encoding.js';

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
  /**
   * The input stopped short (the provider's connection broke): what was written is
   * decoded and handed on, then `then` runs, and no `end` follows. zlib decodes off
   * the main thread, so without this the last pieces in flight would be lost.
   */
  settle(then: () => void): void;
  /** Stops at once; no callback follows. */
  destroy(): void;
}

export interface DecodedSink {
  data(chunk: Buffer): void;
  end(): void;
  error(message: string): void;
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
    settle(then) {
      if (over || stream === null) return then();
      const s = stream;
      s.flush(() => {
        if (over) return;
        over = true;
        s.destroy();
        then();
      });
    },
    destroy() {
      over = true;
      stream?.destroy();
    },
  };
}
