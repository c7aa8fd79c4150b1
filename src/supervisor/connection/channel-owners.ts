// Which forward a shared master's line is about. One master serves every forward of
// its tunnels, and its lines about a connection through a forward (opened, refused,
// failed, closed) name a channel number, not the forward; the line that announces a
// new channel names the listening port just before it. Pure; measured on OpenSSH 9.2
// (LogLevel DEBUG1):
//   -L, -D  debug1: Connection to port 12011 forwarding to localhost port 1 requested.
//           debug1: channel 1: new direct-tcpip [direct-tcpip] …   (dynamic-tcpip for -D)
//           channel 1: open failed: connect failed: Connection refused
//   -R      debug1: client_request_forwarded_tcpip: listen 127.0.0.1 port 12012, originator …
//           debug1: channel 1: new forwarded-tcpip [127.0.0.1] …
//           debug1: channel 1: connection failed: Connection refused
//           connect_to localhost port 1: failed.
//   both    debug1: channel 1: free: …
const ANNOUNCED = /^debug1: (?:Connection to port (\d+) forwarding to |client_request_forwarded_tcpip: listen \S+ port (\d+),)/;
const OPENED = /^debug1: channel (\d+): new (?:direct-tcpip|forwarded-tcpip|dynamic-tcpip)\b/;
const CHANNEL = /^(?:debug\d: )?channel (\d+): (free: )?/;
const CONNECT_TO_FAILED = /^connect_to .*: failed\.$/;

export class ChannelOwners {
  private announced: number | null = null;
  private readonly owners = new Map<number, number>();
  private last: number | null = null;

  /** The listening port this line is about, or null for a line about the connection (or nothing known). */
  portOf(line: string): number | null {
    const a = ANNOUNCED.exec(line);
    if (a !== null) {
      this.announced = Number(a[1] ?? a[2]);
      return this.announced;
    }
    const o = OPENED.exec(line);
    if (o !== null) {
      const channel = Number(o[1]);
      if (this.announced === null) return null;
      this.owners.set(channel, this.announced);
      this.last = channel;
      return this.announced;
    }
    if (CONNECT_TO_FAILED.test(line)) return this.last === null ? null : (this.owners.get(this.last) ?? null);
    const c = CHANNEL.exec(line);
    if (c === null) return null;
    const channel = Number(c[1]);
    const port = this.owners.get(channel) ?? null;
    if (c[2] !== undefined) this.owners.delete(channel);
    else this.last = channel;
    return port;
  }
}
