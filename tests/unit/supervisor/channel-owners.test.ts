// A shared connection's master lines → the listening port (the tunnel) each one is about.
import { describe, expect, it } from 'vitest';
import { ChannelOwners } from '../../../src/supervisor/connection/channel-owners.js';

describe('ChannelOwners: a master line → the listening port it is about', () => {
  it('follows -L, -R and -D channels from the line that announces them to the one that frees them', () => {
    const o = new ChannelOwners();
    const lines: [string, number | null][] = [
      ['debug1: Connection to port 12011 forwarding to localhost port 1 requested.', 12011],
      ['debug1: channel 3: new direct-tcpip [direct-tcpip] (inactive timeout: 0)', 12011],
      ['debug1: client_request_forwarded_tcpip: listen 127.0.0.1 port 12012, originator 127.0.0.1 port 46574', 12012],
      ['debug1: channel 4: new forwarded-tcpip [127.0.0.1] (inactive timeout: 0)', 12012],
      ['channel 3: open failed: connect failed: Connection refused', 12011],
      ['debug1: channel 4: connection failed: Connection refused', 12012],
      ['connect_to localhost port 1: failed.', 12012],
      ['debug1: channel 3: free: direct-tcpip: listening port 12011 for localhost port 1, connect from 127.0.0.1 port 49728', 12011],
      ['channel 3: open failed: administratively prohibited: open failed', null],
      ['debug1: Connection to port 1080 forwarding to socks port 0 requested.', 1080],
      ['debug1: channel 5: new dynamic-tcpip [dynamic-tcpip] (inactive timeout: 0)', 1080],
      ['debug1: channel 1: new mux-control [mux-control] (inactive timeout: 0)', null],
      ['debug1: channel 1: free: mux-control, nchannels 3', null],
      ['Timeout, server 127.0.0.1 not responding.', null],
    ];
    for (const [line, port] of lines) expect([line, o.portOf(line)]).toEqual([line, port]);
  });
});
