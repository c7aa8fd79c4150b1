/**
 * Structured log lines, one JSON object per line on stderr: journald, `docker logs`
 * and jq all read them. The caller never passes a secret (tokens and upstream keys
 * stay out of every entry by construction).
 */
export type Log = (entry: Record<string, unknown>) => void;

export function createLog(write: (line: string) => void, now: () => Date = () => new Date()): Log {
  return (entry) => {
    write(`${JSON.stringify({ time: now().toISOString(), ...entry })}\n`);
  };
}
