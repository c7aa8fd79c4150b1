/**
 * A log entry (daemon/log.ts) may bring its own JSON text under this key: its
 * members, without braces, exactly as JSON.stringify would write its fields. The
 * proxy's per-request line does (proxy/observe/request-record.ts), since
 * JSON.stringify of it cost as much as the rest of the request's record. A symbol, so
 * that the entry's fields stay what every other reader of the entry (a test's log)
 * sees, and JSON.stringify passes over it.
 */
export const OWN_JSON = Symbol('ownJson');
