import { spawn } from 'node:child_process';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ipv6Bytes, ownerIn, peerOf } from '../../../src/edge/peer-account.js';

// The account behind a TCP connection, read from the kernel's tables for real sockets:
// this process's own, and one made by another account (setpriv, as root).
const NOBODY = 65534;
const servers: net.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server on `host` whose next accepted socket is handed back. */
async function listen(host: string): Promise<{ port: number; accepted: Promise<net.Socket> }> {
  const server = net.createServer();
  servers.push(server);
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((r) => server.listen(0, host, r));
  return { port: (server.address() as net.AddressInfo).port, accepted };
}

function connect(host: string, port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port }, () => resolve(s));
    s.once('error', reject);
  });
}

/** A client of another account: `setpriv` runs node as `uid`, which connects and waits for the server to close. */
function connectAs(uid: number, host: string, port: number) {
  const child = spawn('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', process.execPath, '-e', `const s=require('net').connect({host:${JSON.stringify(host)},port:${port}});s.on('data',()=>{});s.on('close',()=>process.exit(0));setTimeout(()=>process.exit(1),20000)`], { stdio: 'ignore' });
  return child;
}

describe('peerOf', () => {
  it('finds this account behind an IPv4 loopback connection, from both ends', async () => {
    const { port, accepted } = await listen('127.0.0.1');
    const client = await connect('127.0.0.1', port);
    const server = await accepted;
    expect(peerOf(server)).toEqual({ kind: 'account', uid: process.getuid!() });
    expect(peerOf(client)).toEqual({ kind: 'account', uid: process.getuid!() });
    client.destroy();
  });

  it('finds it over IPv6 loopback and on a dual-stack socket reached by IPv4', async () => {
    const six = await listen('::1');
    const c6 = await connect('::1', six.port);
    expect(peerOf(await six.accepted)).toEqual({ kind: 'account', uid: process.getuid!() });
    c6.destroy();
    const dual = await listen('::');
    const c4 = await connect('127.0.0.1', dual.port);
    const s4 = await dual.accepted;
    expect(s4.remoteAddress).toBe('::ffff:127.0.0.1');
    expect(peerOf(s4)).toEqual({ kind: 'account', uid: process.getuid!() });
    c4.destroy();
  });

  it('names another account that connects', async () => {
    const { port, accepted } = await listen('127.0.0.1');
    const child = connectAs(NOBODY, '127.0.0.1', port);
    const server = await accepted;
    expect(peerOf(server)).toEqual({ kind: 'account', uid: NOBODY });
    server.destroy();
    await new Promise((r) => child.once('exit', r));
  });

  it('tells a peer not listed on loopback (unknown) from one on the network, and a system without the tables', () => {
    const none = () => '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    expect(peerOf({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '127.0.0.1', remotePort: 40000 }, none).kind).toBe('unknown');
    expect(peerOf({ localAddress: '10.0.0.2', localPort: 8080, remoteAddress: '10.0.0.9', remotePort: 40000 }, none)).toEqual({ kind: 'network' });
    expect(peerOf({ localAddress: '127.0.0.1', localPort: 8080, remoteAddress: '127.0.0.1', remotePort: 40000 }, () => null)).toMatchObject({ kind: 'unknown', unsupported: true });
    expect(peerOf({ remoteAddress: '127.0.0.1' }).kind).toBe('unknown');
  });

  it('reads the uid column of the row with both addresses, never a row with only one of them', () => {
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1F90 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1001        0 1 1 0 20 4 30 10 -1',
      '   1: 0100007F:9C40 0100007F:1F91 01 00000000:00000000 00:00000000 00000000  1002        0 2 1 0 20 4 30 10 -1',
      '   2: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1003        0 3 1 0 20 4 30 10 -1',
    ].join('\n');
    expect(ownerIn(table, '0100007F:9C40 0100007F:1F90 ')).toBe(1003);
    expect(ownerIn(table, '0100007F:9C41 0100007F:1F90 ')).toBeNull();
  });

  it('expands IPv6 addresses as the kernel lists them', () => {
    expect(ipv6Bytes('::1')).toEqual([...Array(15).fill(0), 1]);
    expect(ipv6Bytes('::ffff:127.0.0.1')).toEqual([...Array(10).fill(0), 255, 255, 127, 0, 0, 1]);
    expect(ipv6Bytes('fe80::1%eth0')).toEqual([0xfe, 0x80, ...Array(13).fill(0), 1]);
    expect(ipv6Bytes('not an address')).toBeNull();
  });
});
