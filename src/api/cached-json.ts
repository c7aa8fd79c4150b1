/**
 * A JSON body kept, encoded, until something it shows changes. At 1000 tunnels
 * GET /status is 288 KiB: building the records and serialising them on every request
 * cost ~3–5 ms of the daemon's only thread, while the records change only on a state
 * change or a reload. The owner drops the body on each of those (`invalidate`).
 */
export class CachedJson {
  #bytes: Uint8Array<ArrayBuffer> | null = null;

  constructor(private readonly build: () => unknown) {}

  /** The body, built now if something changed since the last request. */
  bytes(): Uint8Array<ArrayBuffer> {
    this.#bytes ??= Buffer.from(JSON.stringify(this.build()), 'utf8');
    return this.#bytes;
  }

  invalidate(): void {
    this.#bytes = null;
  }
}
