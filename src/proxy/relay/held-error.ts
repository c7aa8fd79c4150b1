import { holdsKey, keyStartAtEnd, scrubText } from './key-scrub.js';

/**
 * An error answer of a provider that has a key, held back until complete: some APIs
 * echo the header they rejected, so the body is searched for the key (in each of its
 * spellings) and it is blanked out before the client gets anything. Only the first MAX_SCRUBBED_ERROR_BYTES are
 * kept; a larger body reaches the client cut at that size, and a cut that falls inside
 * the key leaves none of it: the part of the key before the cut goes too.
 */
export const MAX_SCRUBBED_ERROR_BYTES = 1024 * 1024;

export class HeldError {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(
    readonly status: number,
    readonly rawHeaders: string[],
  ) {}

  push(chunk: Buffer): void {
    const room = MAX_SCRUBBED_ERROR_BYTES - this.size;
    if (room <= 0) return;
    const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
  }

  /** The body as the client gets it: every spelling of `key` (key-scrub.ts, provider.ts keyOf) replaced by `***`. */
  scrubbed(key: string | null): Buffer {
    let body = Buffer.concat(this.chunks, this.size);
    if (key === null) return body;
    // Cut short: a tail that begins the key is the key's start, and goes.
    if (this.size === MAX_SCRUBBED_ERROR_BYTES) body = body.subarray(0, body.length - keyStartAtEnd(body, key));
    return holdsKey(body, key) ? Buffer.from(scrubText(body.toString('utf8'), key)) : body;
  }
}
