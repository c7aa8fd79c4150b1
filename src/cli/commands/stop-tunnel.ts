import { statusRecordSchema } from '../../api/schemas.js';
import { EXIT, formatOptions, print, type CommandContext } from '../context.js';
import { ask } from '../exchange.js';
import { formatRecordLine } from '../format.js';

/** `stop-tunnel <hash>`: one tunnel stopped (it stays stopped until started). */
export async function stopTunnel(ctx: CommandContext, hash: string): Promise<number> {
  const answer = await ask(ctx, 'POST', `/stop/${encodeURIComponent(hash)}`, statusRecordSchema);
  if (!answer.ok) return answer.error;
  print(ctx, answer.value.raw, () => formatRecordLine(answer.value.value, formatOptions(ctx)));
  return EXIT.ok;
}
