/**
 * A log entry (daemon/log.ts) may bring its own formatter under this key: a function
 * that writes the entry's members as JSON, without braces, exactly as JSON.stringify
 * would write its fields. The proxy's per-request line does
 * (proxy/observe/request-record.ts). Such a line is made when its batch is written,
 * together with the other lines of the batch, not when it is logged: made between
 * requests, one at a time, it cost a request 2.2 µs of CPU; made in a row with the
 * others, 0.6–1.4 µs (scripts/bench-proxy-parts.mjs; BENCHMARKS.md, "Chat proxy").
 * The entry's fields must not change after it is logged. A symbol, so that
 * the entry's fields stay what every other reader of the entry (a test's log) sees,
 * and JSON.stringify passes over it.
 */
export const OWN_JSON = Symbol('ownJson');

/** What an entry keeps under OWN_JSON. */
export type OwnJson = (entry: never) => string;
