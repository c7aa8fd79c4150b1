// A private sshd that asks for a key, then a one-time code (TOTP), as a 2FA bastion
// does: PAM's google-authenticator module behind a uniquely named sshd (sshd takes
// its PAM service name from the base name of argv[0]). See docs/testing.md.
import { createHmac, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { basename, join } from 'node:path';
// @ts-expect-error plain JS helper shared with the scripts
import { SSHD_BIN, startSshd } from '../../scripts/lib/sshd.mjs';
import type { Sshd } from './daemon-harness.js';

const PAM_MODULE = ['/lib/x86_64-linux-gnu/security/pam_google_authenticator.so', '/lib/aarch64-linux-gnu/security/pam_google_authenticator.so', '/usr/lib/security/pam_google_authenticator.so'];

export interface OtpSshd extends Sshd {
  /** The code valid at `at` (default now). */
  code(at?: number): string;
  /** A six-digit code that is valid at no step near now. */
  wrongCode(): string;
  /** Logins the server saw, as distinct client ports in its auth lines. */
  logins(): number;
  /** Stops the server and removes the PAM service file. */
  cleanup(): Promise<void>;
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32(bytes: Buffer): string {
  let bits = '';
  for (const b of bytes) bits += b.toString(2).padStart(8, '0');
  let out = '';
  for (let i = 0; i + 5 <= bits.length; i += 5) out += BASE32[parseInt(bits.slice(i, i + 5), 2)];
  return out;
}

/** RFC 6238 with HMAC-SHA1, 30 s steps, six digits. */
export function totp(key: Buffer, atMs: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = (mac[19] as number) & 15;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

export function pamModuleInstalled(): boolean {
  return PAM_MODULE.some((p) => existsSync(p));
}

/** Needs root (it writes /etc/pam.d) and libpam-google-authenticator (scripts/test installs it). */
export async function startOtpSshd(): Promise<OtpSshd> {
  if (!pamModuleInstalled()) {
    throw new Error('pam_google_authenticator.so is missing: apt-get install -y --no-install-recommends libpam-google-authenticator');
  }
  const dir = mkdtempSync(join(tmpdir(), 'tm-otp-'));
  // 20 random bytes, whose base32 form has no padding.
  const key = randomBytes(20);
  const secretFile = join(dir, 'totp_secret');
  writeFileSync(secretFile, `${base32(key)}\n" TOTP_AUTH\n`, { mode: 0o600 });
  const program = join(dir, `tm-otp-${randomBytes(4).toString('hex')}`);
  symlinkSync(SSHD_BIN, program);
  const pamFile = join('/etc/pam.d', basename(program));
  writeFileSync(
    pamFile,
    [
      `auth     required pam_google_authenticator.so secret=${secretFile} noskewadj`,
      'account  required pam_permit.so',
      'session  required pam_permit.so',
      'password required pam_deny.so',
      '',
    ].join('\n'),
  );
  let server: Sshd;
  try {
    server = (await startSshd({
      dir,
      program,
      sshdOptions: [
        'UsePAM yes',
        'KbdInteractiveAuthentication yes',
        'PasswordAuthentication no',
        'AuthenticationMethods publickey,keyboard-interactive',
        // prohibit-password refuses keyboard-interactive for root even as the second step.
        `PermitRootLogin ${userInfo().uid === 0 ? 'yes' : 'prohibit-password'}`,
      ],
    })) as Sshd;
  } catch (e) {
    rmSync(pamFile, { force: true });
    throw e;
  }
  const otp = server as OtpSshd;
  otp.code = (at = Date.now()) => totp(key, at);
  otp.wrongCode = () => {
    const near = [-2, -1, 0, 1, 2].map((s) => totp(key, Date.now() + s * 30_000));
    for (let n = 0; ; n++) {
      const c = String((123456 + n * 7919) % 1_000_000).padStart(6, '0');
      if (!near.includes(c)) return c;
    }
  };
  otp.logins = () => new Set([...server.log.matchAll(/(?:Accepted|Failed|Postponed) keyboard-interactive\/pam for \S+ from \S+ port (\d+)/g)].map((m) => m[1])).size;
  otp.cleanup = async () => {
    await server.kill();
    rmSync(pamFile, { force: true });
    rmSync(dir, { recursive: true, force: true });
  };
  return otp;
}
