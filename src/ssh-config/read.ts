// The one place that runs `ssh -G`: what ssh will really use for a destination, with
// the tunnel's own ssh_options (which can change Port, HostName, User, ProxyJump),
// and which files that answer came from (to watch them).
import { execa } from 'execa';
import { err, ok, type Result } from '../kernel/result.js';
import { configSources, hostInfo, parseSshG, sshErrorLine, type HostInfo, type SshSettings } from './settings.js';

export interface SshGRequest {
  /** The destination as ssh gets it after `--`. */
  host: string;
  /** The tunnel's ssh_options, passed as `-o Key=Value` as the tunnel's ssh gets them. */
  options: Readonly<Record<string, string>>;
}

export interface SshView {
  settings: SshSettings;
  info: HostInfo;
  /** Config files ssh read for this answer, and Include patterns that matched nothing. */
  sources: { files: string[]; emptyIncludes: string[] };
}

/** Reads `ssh -G` for one destination; an error is ssh's own meaningful line. */
export type ReadSshConfig = (req: SshGRequest) => Promise<Result<SshView, string>>;

/** The argv of `ssh -v -G`: the same -F and -o as the tunnel's ssh, `-v` to learn the files read. */
export function sshGArgs(sshConfigPath: string | null, req: SshGRequest): string[] {
  const args = ['-v', '-G'];
  if (sshConfigPath !== null) args.push('-F', sshConfigPath);
  for (const [k, v] of Object.entries(req.options)) args.push('-o', `${k}=${v}`);
  args.push('--', req.host);
  return args;
}

export function sshConfigReader(sshBin: string, sshConfigPath: string | null, timeoutMs = 10_000): ReadSshConfig {
  return async (req) => {
    const r = await execa(sshBin, sshGArgs(sshConfigPath, req), { reject: false, stdin: 'ignore', timeout: timeoutMs });
    if (r.failed || r.exitCode !== 0) {
      return err(r.exitCode === undefined ? (r.shortMessage ?? 'ssh could not be run') : sshErrorLine(String(r.stderr)));
    }
    const settings = parseSshG(String(r.stdout));
    return ok({ settings, info: hostInfo(settings), sources: configSources(String(r.stderr)) });
  };
}
