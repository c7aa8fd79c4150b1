// What the page knows: the config file's view, live statuses, the daemon's state.

export const FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction'];
/** The states a card can show; each has its words in the catalogues (status.<STATE>). */
export const STATES = ['RUNNING', 'STARTING', 'RETRYING', 'FAILED', 'STOPPED', 'AUTH_REQUIRED', 'PENDING', 'UNKNOWN', 'NOT_APPLIED', 'LEFT_OUT'];

export const state = {
  mode: 'default',
  directions: [],
  config: null,
  statuses: new Map(),
  // Status events seen, per tunnel and in all: an action's answer may be older than an
  // event that overtook it, and the event stream alone is always in order (answerIsNewest).
  statusEvents: new Map(),
  snapshots: 0,
  daemon: { reachable: false, code: 'daemon_connecting', params: {}, message: null, where: '' },
  health: null,
  events: null,
  openLogs: new Set(),
  logs: new Map(), // hash -> the text last shown, so a redrawn card does not flash 'Loading…'
  editing: null, // { index: number | null (null: a new tunnel), hash: string | null, version: string }
};

/** A mark of what the event stream has said so far, taken before an action is sent. */
export function statusMark() {
  return { snapshots: state.snapshots, events: new Map(state.statusEvents) };
}

/**
 * Whether an action's answer about a tunnel may be shown: only when no event about it
 * (nor a snapshot) arrived since the mark. Otherwise the stream's newer word stands — an
 * answer that said STARTING must not cover the RUNNING that overtook it.
 */
export function answerIsNewest(mark, hash) {
  return mark.snapshots === state.snapshots && (mark.events.get(hash) ?? 0) === (state.statusEvents.get(hash) ?? 0);
}
