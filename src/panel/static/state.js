// What the page knows: the config file's view, live statuses, the daemon's state.

export const FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction'];
/** The states a card can show; each has its words in the catalogues (status.<STATE>). */
export const STATES = ['RUNNING', 'STARTING', 'RETRYING', 'FAILED', 'STOPPED', 'AUTH_REQUIRED', 'PENDING', 'UNKNOWN', 'NOT_APPLIED', 'LEFT_OUT'];

export const state = {
  mode: 'default',
  directions: [],
  config: null,
  statuses: new Map(),
  daemon: { reachable: false, code: 'daemon_connecting', params: {}, message: null, where: '' },
  health: null,
  events: null,
  openLogs: new Set(),
  logs: new Map(), // hash -> the text last shown, so a redrawn card does not flash 'Loading…'
  editing: null, // { index: number | null (null: a new tunnel), hash: string | null, version: string }
};
