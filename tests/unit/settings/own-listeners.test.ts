// Where the product's own listeners are, for the exposure rule: the daemon's own rule
// for its API address (flag, TUNNEL_API_LISTEN, the reference's API_PORT, the default)
// and PANEL_LISTEN for the panel.
import { describe, expect, test } from 'vitest';
import { apiListenOf, ownListeners } from '../../../src/settings/own-listeners.js';

describe('own listeners', () => {
  test.each([
    [{}, {}, { host: '127.0.0.1', port: 8080 }],
    [{}, { API_PORT: '9191' }, { host: '127.0.0.1', port: 9191 }],
    [{}, { TUNNEL_API_LISTEN: '[::1]:7070', API_PORT: '9191' }, { host: '::1', port: 7070 }],
    [{ listen: '0.0.0.0:6060' }, { TUNNEL_API_LISTEN: '127.0.0.1:7070' }, { host: '0.0.0.0', port: 6060 }],
    [{ listen: '' }, { TUNNEL_API_LISTEN: '' }, { host: '127.0.0.1', port: 8080 }],
  ])('flags %j, env %j: the API at %j', (flags, env, expected) => {
    expect(apiListenOf(flags, env)).toEqual(expected);
  });

  test('the panel at PANEL_LISTEN, else its default', () => {
    const api = { host: '127.0.0.1', port: 8080 };
    expect(ownListeners(api, {})).toEqual([{ kind: 'api', ...api }, { kind: 'panel', host: '127.0.0.1', port: 5000 }]);
    expect(ownListeners(api, { PANEL_LISTEN: '0.0.0.0:5500' })).toEqual([{ kind: 'api', ...api }, { kind: 'panel', host: '0.0.0.0', port: 5500 }]);
  });
});
