// Classification of ssh's end, on stderr captured from OpenSSH 9.2p1 against the
// test sshd (LogLevel DEBUG1, as the supervisor runs it).
import { describe, expect, it } from 'vitest';
import { classifyExit, isDebugLine, spawnFailure, startTimeoutFailure, type ExitFacts } from '../../../src/supervisor/process/ssh-exit-classify.js';

const facts = (stderr: string, over: Partial<ExitFacts> = {}): ExitFacts => ({
  code: 255,
  signal: null,
  lines: stderr.trim().split('\n'),
  flag: '-L',
  remoteBind: null,
  ...over,
});

const PREAMBLE = `debug1: Reading configuration data /tmp/tm-sshd-wEhbXL/ssh_config
debug1: /tmp/tm-sshd-wEhbXL/ssh_config line 1: Applying options for testhost
debug1: Connecting to 127.0.0.1 [127.0.0.1] port 13955.
debug1: fd 3 clearing O_NONBLOCK
debug1: Connection established.
debug1: identity file /tmp/tm-sshd-wEhbXL/client_key type 3
debug1: Local version string SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10
debug1: Remote protocol version 2.0, remote software version OpenSSH_9.2p1 Debian-2+deb12u10
debug1: Authenticating to 127.0.0.1:13955 as 'root'
debug1: load_hostkeys: fopen /etc/ssh/ssh_known_hosts: No such file or directory
debug1: SSH2_MSG_KEXINIT sent
debug1: kex: algorithm: sntrup761x25519-sha512
debug1: Server host key: ssh-ed25519 SHA256:cF1PIVV2EXLUFgZbSSLLf4RoOHY3z0N8Qp7ltSq5MKI`;

const AUTHENTICATED = `${PREAMBLE}
debug1: Host '[127.0.0.1]:13955' is known and matches the ED25519 host key.
debug1: Found key in /tmp/tm-sshd-wEhbXL/known_hosts:1
debug1: rekey in after 134217728 blocks
debug1: Will attempt key: /tmp/tm-sshd-wEhbXL/client_key ED25519 SHA256:zflrGeF8cGv3ZIVl21sh4yJQpYdWG6JMm4QHN/euAFw explicit
debug1: Authentications that can continue: publickey
debug1: Next authentication method: publickey
debug1: Offering public key: /tmp/tm-sshd-wEhbXL/client_key ED25519 SHA256:zflrGeF8cGv3ZIVl21sh4yJQpYdWG6JMm4QHN/euAFw explicit
debug1: Server accepts key: /tmp/tm-sshd-wEhbXL/client_key ED25519 SHA256:zflrGeF8cGv3ZIVl21sh4yJQpYdWG6JMm4QHN/euAFw explicit
Authenticated to 127.0.0.1 ([127.0.0.1]:13955) using "publickey".`;

const REFUSED_KEY = `${PREAMBLE}
debug1: Host '[127.0.0.1]:13955' is known and matches the ED25519 host key.
debug1: Will attempt key: /tmp/tm-sshd-wEhbXL/other_key ED25519 SHA256:umgOBtod8S/8yh50yCRWtPFtoBYvwuWkq15BKWFxq5k explicit
debug1: Authentications that can continue: publickey
debug1: Next authentication method: publickey
debug1: Offering public key: /tmp/tm-sshd-wEhbXL/other_key ED25519 SHA256:umgOBtod8S/8yh50yCRWtPFtoBYvwuWkq15BKWFxq5k explicit
debug1: Authentications that can continue: publickey
debug1: No more authentication methods to try.
root@127.0.0.1: Permission denied (publickey).`;

const HOST_KEY_CHANGED = `${PREAMBLE}
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Someone could be eavesdropping on you right now (man-in-the-middle attack)!
It is also possible that a host key has just been changed.
The fingerprint for the ED25519 key sent by the remote host is
SHA256:cF1PIVV2EXLUFgZbSSLLf4RoOHY3z0N8Qp7ltSq5MKI.
Please contact your system administrator.
Add correct host key in /tmp/tm-sshd-wEhbXL/known_hosts to get rid of this message.
Offending ED25519 key in /tmp/tm-sshd-wEhbXL/known_hosts:1
  remove with:
  ssh-keygen -f "/tmp/tm-sshd-wEhbXL/known_hosts" -R "[127.0.0.1]:13955"
Host key for [127.0.0.1]:13955 has changed and you have requested strict checking.
Host key verification failed.`;

const UNKNOWN_HOST_KEY = `${PREAMBLE}
debug1: hostkeys_find_by_key_hostfile: hostkeys file /etc/ssh/ssh_known_hosts2 does not exist
Host key verification failed.`;

const LOCAL_BUSY = `${AUTHENTICATED}
debug1: Local connections to 127.0.0.1:22088 forwarded to remote address localhost:22
debug1: Local forwarding listening on 127.0.0.1 port 22088.
bind [127.0.0.1]:22088: Address already in use
channel_setup_fwd_listener_tcpip: cannot listen to port: 22088
Could not request local forwarding.`;

const REMOTE_FAILED = `${AUTHENTICATED}
debug1: Remote connections from 10.9.9.9:22088 forwarded to local address localhost:22
debug1: ssh_init_forwarding: expecting replies for 1 forwards
debug1: Requesting no-more-sessions@openssh.com
debug1: Entering interactive session.
debug1: pledge: network
debug1: client_input_global_request: rtype hostkeys-00@openssh.com want_reply 0
debug1: Remote: /tmp/tm-sshd-wEhbXL/authorized_keys:1: key options: agent-forwarding port-forwarding pty user-rc x11-forwarding
debug1: remote forward failure for: listen 10.9.9.9:22088, connect localhost:22
Error: remote port forwarding failed for listen port 22088`;

const SESSION_KILLED = `${AUTHENTICATED}
debug1: Entering interactive session.
debug1: client_input_global_request: rtype hostkeys-00@openssh.com want_reply 0
debug1: channel 0: free: port listener, nchannels 1
Connection to 127.0.0.1 closed by remote host.
Transferred: sent 3360, received 3152 bytes, in 0.6 seconds
Bytes per second: sent 5337.5, received 5007.0
debug1: Exit status -1`;

const SERVER_FROZEN = `Warning: Permanently added '[127.0.0.1]:23759' (ED25519) to the list of known hosts.
Authenticated to 127.0.0.1 ([127.0.0.1]:23759) using "publickey".
Timeout, server 127.0.0.1 not responding.`;

const SERVER_DOWN = `debug1: Reading configuration data /tmp/tm-sshd-wEhbXL/ssh_config
debug1: /tmp/tm-sshd-wEhbXL/ssh_config line 1: Applying options for testhost
debug1: Connecting to 127.0.0.1 [127.0.0.1] port 13955.
debug1: connect to address 127.0.0.1 port 13955: Connection refused
ssh: connect to host 127.0.0.1 port 13955: Connection refused`;

const MAX_STARTUPS = `kex_exchange_identification: Connection closed by remote host
Connection closed by 127.0.0.1 port 23759`;

describe('classifyExit: FAILED, no retry', () => {
  it('a refused key is an authentication failure, named by ssh line, not by debug noise', () => {
    const f = classifyExit(facts(REFUSED_KEY));
    expect(f).toMatchObject({ reason: 'auth', retry: false, probe: null });
    expect(f.message).toBe('authentication failed: root@127.0.0.1: Permission denied (publickey).');
  });

  it("a key ssh ignores for its modes, or cannot read, is named as the cause of the refusal (OpenSSH 9.2's lines)", () => {
    const tooOpen = [
      '@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@',
      '@         WARNING: UNPROTECTED PRIVATE KEY FILE!          @',
      '@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@',
      "Permissions 0644 for '/home/tunnel/.ssh/id_ed25519' are too open.",
      'It is required that your private key files are NOT accessible by others.',
      'This private key will be ignored.',
      'Load key "/home/tunnel/.ssh/id_ed25519": bad permissions',
      'root@127.0.0.1: Permission denied (publickey).',
    ].join('\n');
    const f = classifyExit(facts(tooOpen));
    expect(f).toMatchObject({ reason: 'auth', retry: false });
    expect(f.message).toBe('ssh ignored the private key: it belongs to the user ssh runs as and group or others can read it (tunnel-manager check names the fix): Load key "/home/tunnel/.ssh/id_ed25519": bad permissions');
    const unreadable = 'Load key "/keys/id_ed25519": Permission denied\nroot@127.0.0.1: Permission denied (publickey).';
    expect(classifyExit(facts(unreadable))).toMatchObject({
      reason: 'auth',
      retry: false,
      message: 'the user ssh runs as cannot read the private key (tunnel-manager check names the fix): Load key "/keys/id_ed25519": Permission denied',
    });
  });

  it('a changed host key is a host key failure', () => {
    const f = classifyExit(facts(HOST_KEY_CHANGED));
    expect(f).toMatchObject({ reason: 'host_key', retry: false });
    expect(f.message).toMatch(/^host key verification failed: /);
  });

  it('an unknown host key (strict checking) is a host key failure', () => {
    expect(classifyExit(facts(UNKNOWN_HOST_KEY))).toMatchObject({ reason: 'host_key', retry: false, message: 'host key verification failed: Host key verification failed.' });
  });

  it('an alias that does not resolve is an unknown host', () => {
    const f = classifyExit(facts(`debug1: Reading configuration data /tmp/x/ssh_config
ssh: Could not resolve hostname nosuchhost: Name or service not known`));
    expect(f).toMatchObject({ reason: 'unknown_host', retry: false, message: 'unknown host: ssh: Could not resolve hostname nosuchhost: Name or service not known' });
  });

  it.each([
    'command-line: line 0: Bad configuration option: foo',
    "Bad local forwarding specification '127.0.0.1:99999:localhost:22'",
    "Bad remote forwarding specification '127.0.0.1:99999:localhost:22'",
    "Bad port 'abc'",
    "command-line line 0: Bad port 'abc'.",
    'unknown option -- Z\nusage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface]\n           [-b bind_address] [-c cipher_spec] [-D [bind_address:]port]',
    'bind [127.0.0.1]:80: Permission denied\nCould not request local forwarding.',
  ])('bad arguments: %s', (stderr) => {
    expect(classifyExit(facts(stderr))).toMatchObject({ reason: 'bad_arguments', retry: false });
  });

  it('an ssh binary that cannot be run is FAILED', () => {
    expect(spawnFailure('spawn /nope/ssh ENOENT')).toMatchObject({ reason: 'spawn_failed', retry: false, message: 'could not run ssh: spawn /nope/ssh ENOENT' });
  });
});

describe('classifyExit: RETRYING', () => {
  it('a busy local port names the bind line and asks for a bind probe', () => {
    const f = classifyExit(facts(LOCAL_BUSY));
    expect(f).toMatchObject({ reason: 'local_port_busy', retry: true, probe: 'local-bind' });
    expect(f.message).toBe('local port is busy: bind [127.0.0.1]:22088: Address already in use');
  });

  it('a refused remote forward says the port may be taken', () => {
    const f = classifyExit(facts(REMOTE_FAILED, { flag: '-R', remoteBind: null }));
    expect(f).toMatchObject({ reason: 'remote_forward_failed', retry: true, probe: null });
    expect(f.message).toBe('remote forward refused by the server: Error: remote port forwarding failed for listen port 22088 (the port may be taken on the server)');
  });

  it('a refused remote forward on a non-loopback bind address names GatewayPorts', () => {
    const f = classifyExit(facts(REMOTE_FAILED, { flag: '-R', remoteBind: '10.9.9.9' }));
    expect(f.message).toMatch(/GatewayPorts clientspecified.*10\.9\.9\.9/);
    expect(classifyExit(facts(REMOTE_FAILED, { flag: '-R', remoteBind: '127.0.0.1' })).message).not.toMatch(/GatewayPorts/);
  });

  it('a refused connection asks for a probe of the ssh port', () => {
    expect(classifyExit(facts(SERVER_DOWN))).toMatchObject({
      reason: 'refused',
      retry: true,
      probe: 'ssh-port',
      message: 'connection refused: ssh: connect to host 127.0.0.1 port 13955: Connection refused',
    });
  });

  it('a server that stopped answering is a timeout', () => {
    expect(classifyExit(facts(SERVER_FROZEN))).toMatchObject({ reason: 'timeout', retry: true, probe: 'ssh-port', message: 'server not responding: Timeout, server 127.0.0.1 not responding.' });
  });

  it.each([
    ['ssh: connect to host 10.0.0.1 port 22: Connection timed out', 'timeout'],
    ['ssh: connect to host 10.0.0.1 port 22: Network is unreachable', 'unreachable'],
    ['ssh: connect to host 10.0.0.1 port 22: No route to host', 'unreachable'],
    ['ssh: Could not resolve hostname bastion: Temporary failure in name resolution', 'unreachable'],
  ])('%s → %s', (line, reason) => {
    expect(classifyExit(facts(line))).toMatchObject({ reason, retry: true, probe: 'ssh-port' });
  });

  it('a connection closed by the server is a lost connection; the transfer summary is not the message', () => {
    const f = classifyExit(facts(SESSION_KILLED));
    expect(f).toMatchObject({ reason: 'connection_lost', retry: true, probe: null, message: 'connection lost: Connection to 127.0.0.1 closed by remote host.' });
  });

  it('a connection dropped by MaxStartups is a lost connection', () => {
    expect(classifyExit(facts(MAX_STARTUPS))).toMatchObject({ reason: 'connection_lost', retry: true, message: 'connection lost: kex_exchange_identification: Connection closed by remote host' });
  });

  it('a signal without a message says which signal', () => {
    expect(classifyExit(facts(AUTHENTICATED, { code: null, signal: 'SIGKILL' }))).toMatchObject({ reason: 'signal', retry: true, message: 'ssh was ended by SIGKILL' });
  });

  it('anything else is retried with the last meaningful line, never a debug line', () => {
    const f = classifyExit(facts(`${AUTHENTICATED}\nsomething odd happened\ndebug1: Exit status 1`, { code: 1 }));
    expect(f).toMatchObject({ reason: 'unknown', retry: true, message: 'ssh exited (exit code 1): something odd happened' });
    expect(classifyExit(facts('debug1: Exit status 0', { code: 0 })).message).toBe('ssh exited unexpectedly (exit code 0)');
  });

  it('a start that took too long is retried', () => {
    expect(startTimeoutFailure(15)).toMatchObject({ reason: 'start_timeout', retry: true, message: 'ssh did not report the forward established within 15 s' });
  });
});

describe('isDebugLine', () => {
  it('tells debug lines from the rest', () => {
    expect(isDebugLine('debug1: Connection established.')).toBe(true);
    expect(isDebugLine('debug3: x')).toBe(true);
    expect(isDebugLine('Host key verification failed.')).toBe(false);
  });
});
