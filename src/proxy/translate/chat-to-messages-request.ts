/**
 * A chat-completion request (`/v1/chat/completions`, OpenAI's format) as a Messages
 * request for a `format: anthropic` provider. Pure: one shape in, the other out, or
 * the 400 naming the first field that has no counterpart. The table of what maps to
 * what is in docs/proxy.md ("Format translation").
 */
import { err, ok, type Result } from '../../kernel/result.js';
import { invalidRequest, type ProxyError } from '../errors.js';
import { carry, Dropped, isObject, malformed, refused, type Json, type TranslatedRequest } from './shape.js';

/**
 * Messages requires `max_tokens`; OpenAI's clients rarely send it. 4096 is what every
 * Anthropic model accepts as its output limit (the oldest allow no more).
 */
export const DEFAULT_MAX_TOKENS = 4096;

// Fields read below. Any other (`frequency_penalty`, `presence_penalty`, `seed`,
// `logit_bias`, `store`, `reasoning_effort`, …) has no counterpart: it is left out and
// named in the answer's header.
const MAPPED = new Set([
  'model', 'messages', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p', 'top_k', 'stream', 'stream_options',
  'stop', 'tools', 'tool_choice', 'parallel_tool_calls', 'user', 'n', 'response_format', 'logprobs', 'top_logprobs', 'modalities', 'audio',
]);

export function chatToMessagesRequest(c: Json): Result<TranslatedRequest, ProxyError> {
  const dropped = new Dropped();
  const out: Json = {};
  carry(c, out, 'model');
  for (const name of Object.keys(c)) if (!MAPPED.has(name) && c[name] !== undefined) dropped.add(name);
  if (c.n !== undefined && c.n !== 1) return refused('n', 'Messages gives one answer per request; send n requests');
  if (c.logprobs === true || (c.top_logprobs !== undefined && c.top_logprobs !== 0)) return refused('logprobs', 'a Messages provider reports no log probabilities');
  if ((Array.isArray(c.modalities) && c.modalities.includes('audio')) || c.audio !== undefined) return refused('audio', 'a Messages provider answers in text only');
  // max_completion_tokens is the newer name (the only one for OpenAI's reasoning models); either is taken.
  const max = c.max_completion_tokens ?? c.max_tokens;
  if (max !== undefined && max !== null && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) return malformed(c.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens', 'a positive integer', max);
  out.max_tokens = typeof max === 'number' ? max : DEFAULT_MAX_TOKENS;
  for (const name of ['temperature', 'top_p', 'top_k', 'stream'] as const) if (c[name] !== null) carry(c, out, name);
  if (c.stop !== undefined && c.stop !== null) {
    const stop = typeof c.stop === 'string' ? [c.stop] : c.stop;
    if (!Array.isArray(stop) || stop.some((s) => typeof s !== 'string')) return malformed('stop', 'a string or an array of strings', c.stop);
    out.stop_sequences = stop;
  }
  if (typeof c.user === 'string') out.metadata = { user_id: c.user };
  if (isObject(c.response_format) && c.response_format.type !== 'text') {
    const f = c.response_format;
    if (f.type !== 'json_schema' || !isObject(f.json_schema) || !isObject(f.json_schema.schema)) {
      return refused('response_format', 'only {"type": "json_schema", "json_schema": {"schema": …}} has a Messages counterpart (output_format); json_object has none');
    }
    out.output_format = { type: 'json_schema', schema: f.json_schema.schema };
  }
  if (!Array.isArray(c.messages)) return malformed('messages', 'an array of messages', c.messages);
  const turns = messagesOf(c.messages, dropped);
  if (!turns.ok) return turns;
  if (turns.value.system !== null) out.system = turns.value.system;
  out.messages = turns.value.messages;
  if (c.tools !== undefined && c.tools !== null) {
    const tools = toolsOf(c.tools, dropped);
    if (!tools.ok) return tools;
    out.tools = tools.value;
  }
  const choice = toolChoice(c.tool_choice, c.parallel_tool_calls === false);
  if (!choice.ok) return choice;
  if (choice.value !== null) out.tool_choice = choice.value;
  return ok({ body: out, dropped: dropped.list() });
}

/** The chat messages as Messages' `system` and turns: system and developer messages lift out; tool results join the user turn that follows. */
function messagesOf(list: unknown[], dropped: Dropped): Result<{ system: string | null; messages: Json[] }, ProxyError> {
  const system: string[] = [];
  const out: { role: 'user' | 'assistant'; content: Json[] }[] = [];
  const push = (role: 'user' | 'assistant', blocks: Json[]): void => {
    const last = out[out.length - 1];
    // Messages alternates roles: consecutive turns of one role become one.
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    const at = `messages[${i}]`;
    if (!isObject(m)) return malformed(at, 'a message object', m);
    if (m.name !== undefined) dropped.add('messages[].name');
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = textOf(m.content, `${at}.content`);
        if (!text.ok) return text;
        system.push(text.value);
        break;
      }
      case 'user': {
        const blocks = userBlocks(m.content, `${at}.content`);
        if (!blocks.ok) return blocks;
        push('user', blocks.value);
        break;
      }
      case 'assistant': {
        const blocks = assistantBlocks(m, at);
        if (!blocks.ok) return blocks;
        if (blocks.value.length > 0) push('assistant', blocks.value);
        break;
      }
      case 'tool': {
        if (typeof m.tool_call_id !== 'string') return malformed(`${at}.tool_call_id`, 'a string', m.tool_call_id);
        const text = textOf(m.content, `${at}.content`);
        if (!text.ok) return text;
        push('user', [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: text.value }]);
        break;
      }
      default:
        return refused(`${at}.role`, `role ${JSON.stringify(m.role)} has no Messages counterpart (system, developer, user, assistant and tool do)`);
    }
  }
  return ok({ system: system.length === 0 ? null : system.join('\n\n'), messages: out });
}

/** Content that must be text: a string, or text parts joined. */
function textOf(content: unknown, at: string): Result<string, ProxyError> {
  if (content === null || content === undefined) return ok('');
  if (typeof content === 'string') return ok(content);
  if (!Array.isArray(content)) return malformed(at, 'a string or an array of text parts', content);
  const texts: string[] = [];
  for (let i = 0; i < content.length; i++) {
    const p: unknown = content[i];
    if (!isObject(p) || p.type !== 'text' || typeof p.text !== 'string') return refused(`${at}[${i}]`, 'only text parts have a counterpart here');
    texts.push(p.text);
  }
  return ok(texts.join(''));
}

function userBlocks(content: unknown, at: string): Result<Json[], ProxyError> {
  if (typeof content === 'string') return ok([{ type: 'text', text: content }]);
  if (!Array.isArray(content)) return malformed(at, 'a string or an array of content parts', content);
  const out: Json[] = [];
  for (let i = 0; i < content.length; i++) {
    const p: unknown = content[i];
    const where = `${at}[${i}]`;
    if (!isObject(p)) return malformed(where, 'a content part object', p);
    if (p.type === 'text' && typeof p.text === 'string') out.push({ type: 'text', text: p.text });
    else if (p.type === 'image_url') {
      const url = isObject(p.image_url) ? p.image_url.url : p.image_url;
      if (typeof url !== 'string') return malformed(`${where}.image_url.url`, 'a string', url);
      const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
      out.push({ type: 'image', source: data === null ? { type: 'url', url } : { type: 'base64', media_type: data[1], data: data[2] } });
    } else {
      return refused(`${where}.type`, `content parts of type ${JSON.stringify(p.type)} have no Messages counterpart (text and image_url do)`);
    }
  }
  return ok(out);
}

function assistantBlocks(m: Json, at: string): Result<Json[], ProxyError> {
  const text = textOf(m.content, `${at}.content`);
  if (!text.ok) return text;
  const out: Json[] = text.value === '' ? [] : [{ type: 'text', text: text.value }];
  if (m.tool_calls === undefined || m.tool_calls === null) return ok(out);
  if (!Array.isArray(m.tool_calls)) return malformed(`${at}.tool_calls`, 'an array of tool calls', m.tool_calls);
  for (let i = 0; i < m.tool_calls.length; i++) {
    const call: unknown = m.tool_calls[i];
    const where = `${at}.tool_calls[${i}]`;
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function) || typeof call.function.name !== 'string') {
      return malformed(where, 'a function tool call with "id" and "function.name"', call);
    }
    const args = call.function.arguments;
    let input: unknown = {};
    if (typeof args === 'string' && args.trim() !== '') {
      try {
        input = JSON.parse(args);
      } catch {
        input = null;
      }
    }
    if (!isObject(input)) return err(invalidRequest(`"${where}.function.arguments" must be a JSON object in a string (Messages keeps tool input as an object)`, `${where}.function.arguments`));
    out.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  }
  return ok(out);
}

function toolsOf(tools: unknown, dropped: Dropped): Result<Json[], ProxyError> {
  if (!Array.isArray(tools)) return malformed('tools', 'an array of tools', tools);
  const out: Json[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    if (!isObject(t) || t.type !== 'function' || !isObject(t.function)) return refused(`tools[${i}].type`, 'only function tools have a Messages counterpart');
    const fn = t.function;
    if (typeof fn.name !== 'string') return malformed(`tools[${i}].function.name`, 'a string', fn.name);
    if (fn.strict !== undefined) dropped.add('tools[].function.strict');
    const tool: Json = { name: fn.name, input_schema: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
    if (typeof fn.description === 'string') tool.description = fn.description;
    out.push(tool);
  }
  return ok(out);
}

function toolChoice(choice: unknown, serial: boolean): Result<Json | null, ProxyError> {
  let out: Json | null;
  if (choice === undefined || choice === null) out = serial ? { type: 'auto' } : null;
  else if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice === 'none') out = { type: 'none' };
  else if (isObject(choice) && choice.type === 'function' && isObject(choice.function) && typeof choice.function.name === 'string') out = { type: 'tool', name: choice.function.name };
  else return malformed('tool_choice', '"auto", "required", "none" or {"type": "function", "function": {"name": …}}', choice);
  if (serial && out !== null && out.type !== 'none') out.disable_parallel_tool_use = true;
  return ok(out);
}
