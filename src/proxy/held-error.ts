/**
 * An error answer of a provider that has a key, held back until complete: some APIs
 * echo the header they rejected, so the body is searched for the key and it is blanked
 * out before the client gets anything. Only bodies up to MAX_SCRUBBED_ERROR_BYTES are
 * kept; a larger one reaches the client cut at that size, never unsearched.
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
    if (this.size + chunk.length <= MAX_SCRUBBED_ERROR_BYTES) this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** The body as the client gets it: `key` replaced by `***` wherever it appears. */
  scrubbed(key: string | null): Buffer {
    const body = Buffer.concat(this.chunks);
    return key !== null && body.includes(key) ? Buffer.from(body.toString('utf8').replaceAll(key, '***')) : body;
  }
}
