/**
 * One wording for a listener that cannot bind, shared by every command that listens
 * (the daemon's TCP port and unix socket, the panel, `tunnel-manager proxy`): the
 * command prints it as its one line and exits 1, whatever the cause.
 */

/** `host:port` as a user writes it (`[::1]:8080` for IPv6). */
export function showAddress(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Why `where` (an address as showAddress writes it, or a socket path) could not be
 * bound, with what to do about it. `e` is what `listen` emitted.
 */
export function listenFailure(where: string, e: unknown, kind: 'tcp' | 'socket' = 'tcp'): string {
  return `cannot listen on ${where}: ${reason(e, kind)}`;
}

function reason(e: unknown, kind: 'tcp' | 'socket'): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return 'the address is already in use';
    case 'EACCES':
    case 'EPERM':
      return kind === 'tcp' ? 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)' : 'permission denied';
    case 'EADDRNOTAVAIL':
      return 'the address is not on this machine';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return 'the host name does not resolve to an address of this machine';
    case 'EAFNOSUPPORT':
      return 'this machine has no such address family (IPv6 turned off?)';
    case 'ENOENT':
    case 'ENOTDIR':
      return 'its folder does not exist';
    default:
      return e instanceof Error ? e.message : String(e);
  }
}
