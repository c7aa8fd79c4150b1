// What the page knows: the config file's view, live statuses, the daemon's state.

export const FIELDS = ['name', 'remote_host', 'remote_port', 'local_port', 'direction'];
export const STATE_WORDS = {
  RUNNING: 'Running', STARTING: 'Starting', RETRYING: 'Retrying', FAILED: 'Failed', STOPPED: 'Stopped', AUTH_REQUIRED: 'Login needed',
  PENDING: 'Pending', UNKNOWN: 'Unknown', NOT_APPLIED: 'Not applied', LEFT_OUT: 'Left out',
};

export const state = {
  mode: 'default',
  directions: [],
  config: null,
  statuses: new Map(),
  daemon: { reachable: false, message: 'connecting…', where: '' },
  health: null,
  events: null,
  openLogs: new Set(),
  logs: new Map(), // hash -> the text last shown, so a redrawn card does not flash 'Loading…'
  editing: null, // { index: number | null (null: a new tunnel), hash: string | null, version: string }
};
