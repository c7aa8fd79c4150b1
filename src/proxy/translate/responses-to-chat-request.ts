/**
 * A Responses API request (`/v1/responses`) as a chat-completion request, for a
 * provider marked `responses: chat` (most self-hosted servers have chat completions
 * only). Pure. The table of what maps to what is in docs/proxy.md.
 */
import { ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { carry, Dropped, isObject, malformed, refused, type Json, type TranslatedRequest } from './shape.js';

const MAPPED = new Set(['model', 'input', 'instructions', 'max_output_tokens', 'temperature', 'top_p', 'top_k', 'stream', 'tools', 'tool_choice', 'parallel_tool_calls', 'text', 'user', 'store', 'previous_response_id', 'background', 'conversation', 'prompt']);
// Asking for state only the provider of the Responses API keeps: a chat provider has none of it.
// A Map, not an object: a field named like one of Object's own ("constructor") must not match.
const STATEFUL = new Map<string, string>([
  ['previous_response_id', 'a chat provider keeps no responses to continue; send the whole conversation as input'],
  ['conversation', 'a chat provider keeps no conversations; send the whole conversation as input'],
  ['background', 'a chat provider cannot run a response in the background'],
  ['prompt', 'stored prompt templates live on OpenAI\'s platform only'],
]);

export function responsesToChatRequest(r: Json): Result<TranslatedRequest, ProxyError> {
  const dropped = new Dropped();
  const out: Json = {};
  carry(r, out, 'model');
  for (const [name, value] of Object.entries(r)) {
    if (value === undefined || value === null) continue;
    const why = STATEFUL.get(name);
    if (why !== undefined && value !== false) return refused(name, why);
    if (!MAPPED.has(name)) dropped.add(name);
  }
  // A response the client asks to store is not kept by a chat provider: said, not refused (store defaults to true).
  if (r.store === true) dropped.add('store');
  carry(r, out, 'max_output_tokens', 'max_tokens');
  for (const name of ['temperature', 'top_p', 'top_k', 'stream', 'parallel_tool_calls', 'user'] as const) if (r[name] !== null) carry(r, out, name);
  if (r.stream === true) out.stream_options = { include_usage: true };
  const messages: Json[] = [];
  if (typeof r.instructions === 'string') messages.push({ role: 'system', content: r.instructions });
  const input = inputMessages(r.input, dropped);
  if (!input.ok) return input;
  messages.push(...input.value);
  out.messages = messages;
  if (r.tools !== undefined && r.tools !== null) {
    if (!Array.isArray(r.tools)) return malformed('tools', 'an array of tools', r.tools);
    const tools: Json[] = [];
    for (let i = 0; i < r.tools.length; i++) {
      const t: unknown = r.tools[i];
      if (!isObject(t) || t.type !== 'function' || typeof t.name !== 'string') {
        return refused(`tools[${i}].type`, `${JSON.stringify(isObject(t) ? t.type : t)} is a tool OpenAI's platform runs itself; a chat provider has only function tools`);
      }
      const fn: Json = { name: t.name, parameters: isObject(t.parameters) ? t.parameters : { type: 'object', properties: {} } };
      if (typeof t.description === 'string') fn.description = t.description;
      if (typeof t.strict === 'boolean') fn.strict = t.strict;
      tools.push({ type: 'function', function: fn });
    }
    out.tools = tools;
  }
  if (r.tool_choice !== undefined && r.tool_choice !== null) {
    const c = r.tool_choice;
    if (c === 'auto' || c === 'none' || c === 'required') out.tool_choice = c;
    else if (isObject(c) && c.type === 'function' && typeof c.name === 'string') out.tool_choice = { type: 'function', function: { name: c.name } };
    else return refused('tool_choice', 'only "auto", "none", "required" and {"type": "function", "name": …} have a chat counterpart');
  }
  if (isObject(r.text) && isObject(r.text.format)) {
    const f = r.text.format;
    if (f.type === 'json_schema') out.response_format = { type: 'json_schema', json_schema: { name: f.name ?? 'output', schema: f.schema, ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}) } };
    else if (f.type === 'json_object') out.response_format = { type: 'json_object' };
  }
  if (isObject(r.text) && r.text.verbosity !== undefined) dropped.add('text.verbosity');
  return ok({ body: out, dropped: dropped.list() });
}

/** `input`: a string (one user message) or a list of items: messages, function calls and their outputs. */
function inputMessages(input: unknown, dropped: Dropped): Result<Json[], ProxyError> {
  if (typeof input === 'string') return ok([{ role: 'user', content: input }]);
  if (!Array.isArray(input)) return malformed('input', 'a string or an array of input items', input);
  const out: Json[] = [];
  for (let i = 0; i < input.length; i++) {
    const item: unknown = input[i];
    const at = `input[${i}]`;
    if (!isObject(item)) return malformed(at, 'an input item object', item);
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role;
      if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') return malformed(`${at}.role`, '"user", "assistant", "system" or "developer"', role);
      const content = contentOf(item.content, `${at}.content`);
      if (!content.ok) return content;
      out.push({ role: role === 'developer' ? 'system' : role, content: content.value });
    } else if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') return malformed(at, 'a function_call with string "call_id" and "name"', item);
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '{}' } };
      const last = out[out.length - 1];
      // Calls of one turn, and the text before them, make one assistant message.
      if (last !== undefined && last.role === 'assistant') ((last.tool_calls as Json[] | undefined) ?? (last.tool_calls = [])).push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return malformed(`${at}.call_id`, 'a string', item.call_id);
      const text = typeof item.output === 'string' ? item.output : contentOf(item.output, `${at}.output`);
      if (typeof text !== 'string' && !text.ok) return text;
      out.push({ role: 'tool', tool_call_id: item.call_id, content: typeof text === 'string' ? text : text.value });
    } else if (type === 'reasoning') {
      dropped.add('input[].reasoning');
    } else {
      return refused(`${at}.type`, `input items of type ${JSON.stringify(type)} have no chat counterpart (message, function_call, function_call_output do)`);
    }
  }
  return ok(out);
}

/** A message's content: a string, or parts (input_text, output_text, input_image) as chat parts (a plain string when only text). */
function contentOf(content: unknown, at: string): Result<string | Json[], ProxyError> {
  if (typeof content === 'string') return ok(content);
  if (!Array.isArray(content)) return malformed(at, 'a string or an array of content parts', content);
  const parts: Json[] = [];
  for (let i = 0; i < content.length; i++) {
    const p: unknown = content[i];
    const where = `${at}[${i}]`;
    if (!isObject(p)) return malformed(where, 'a content part object', p);
    if ((p.type === 'input_text' || p.type === 'output_text' || p.type === 'text') && typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
    else if (p.type === 'input_image' && typeof p.image_url === 'string') parts.push({ type: 'image_url', image_url: { url: p.image_url, ...(typeof p.detail === 'string' ? { detail: p.detail } : {}) } });
    else if (p.type === 'refusal' && typeof p.refusal === 'string') parts.push({ type: 'text', text: p.refusal });
    else return refused(`${where}.type`, `content parts of type ${JSON.stringify(p.type)}${p.type === 'input_image' ? ' by file_id' : ''} have no chat counterpart (input_text, output_text and input_image by URL do)`);
  }
  return ok(parts.every((p) => p.type === 'text') ? parts.map((p) => p.text as string).join('') : parts);
}
