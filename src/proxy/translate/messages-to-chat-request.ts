/**
 * A Messages request (`/v1/messages`, Anthropic's format) as a chat-completion request
 * for an OpenAI-format provider (vLLM, llama.cpp, Ollama, SGLang). Pure: one shape in,
 * the other out, or the 400 naming the first field that has no counterpart.
 * The table of what maps to what is in docs/proxy.md ("Format translation").
 */
import { ok, type Result } from '../../kernel/result.js';
import type { ProxyError } from '../errors.js';
import { carry, Dropped, isObject, malformed, refused, type Json, type TranslatedRequest } from './shape.js';

// Fields the provider gets under the same name and meaning.
const SAME = ['model', 'max_tokens', 'temperature', 'top_p', 'top_k', 'stream'] as const;
// Fields read below. Any other (`thinking`, `service_tier`, `context_management`, …) asks
// for something a chat-completion provider cannot do: it is left out and named in the answer's header.
const MAPPED = new Set([...SAME, 'messages', 'system', 'stop_sequences', 'metadata', 'tools', 'tool_choice', 'output_format']);
// Fields whose loss would change what the client gets back: refused.
// A Map, not an object: a field named like one of Object's own ("constructor") must not match.
const REFUSED_FIELDS = new Map<string, string>([
  ['container', 'code-execution containers exist only on Anthropic\'s API'],
  ['mcp_servers', 'remote MCP servers are called by Anthropic\'s API itself; an OpenAI-format provider has no counterpart'],
]);

export function messagesToChatRequest(m: Json): Result<TranslatedRequest, ProxyError> {
  const dropped = new Dropped();
  const out: Json = {};
  for (const name of SAME) carry(m, out, name);
  if (m.stream === true) out.stream_options = { include_usage: true };
  for (const name in m) {
    if (m[name] === undefined) continue;
    const why = REFUSED_FIELDS.get(name);
    if (why !== undefined) return refused(name, why);
    if (!MAPPED.has(name)) dropped.add(name);
  }
  if (m.stop_sequences !== undefined) {
    if (!Array.isArray(m.stop_sequences) || m.stop_sequences.some((s) => typeof s !== 'string')) return malformed('stop_sequences', 'an array of strings', m.stop_sequences);
    out.stop = m.stop_sequences;
  }
  if (m.metadata !== undefined) {
    if (!isObject(m.metadata)) return malformed('metadata', 'an object', m.metadata);
    if (typeof m.metadata.user_id === 'string') out.user = m.metadata.user_id;
    for (const k of Object.keys(m.metadata)) if (k !== 'user_id') dropped.add(`metadata.${k}`);
  }
  const messages: Json[] = [];
  const system = systemText(m.system, dropped);
  if (!system.ok) return system;
  if (system.value !== null) messages.push({ role: 'system', content: system.value });
  if (!Array.isArray(m.messages)) return malformed('messages', 'an array of messages', m.messages);
  for (let i = 0; i < m.messages.length; i++) {
    const turn = message(m.messages[i] as Json, `messages[${i}]`, dropped);
    if (!turn.ok) return turn;
    messages.push(...turn.value);
  }
  out.messages = messages;
  if (m.tools !== undefined) {
    const tools = toolsOf(m.tools, dropped);
    if (!tools.ok) return tools;
    out.tools = tools.value;
  }
  if (m.output_format !== undefined) {
    const f = m.output_format;
    if (!isObject(f) || f.type !== 'json_schema' || !isObject(f.schema)) return malformed('output_format', '{"type": "json_schema", "schema": {…}}', f);
    out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: f.schema, strict: true } };
  }
  if (m.tool_choice !== undefined) {
    const choice = toolChoice(m.tool_choice, out);
    if (!choice.ok) return choice;
  }
  return ok({ body: out, dropped: dropped.list() });
}

/** `system`: a string, or text blocks (joined by a blank line, as separate paragraphs). */
function systemText(system: unknown, dropped: Dropped): Result<string | null, ProxyError> {
  if (system === undefined) return ok(null);
  if (typeof system === 'string') return ok(system);
  if (!Array.isArray(system)) return malformed('system', 'a string or an array of text blocks', system);
  const texts: string[] = [];
  for (let i = 0; i < system.length; i++) {
    const b: unknown = system[i];
    if (!isObject(b) || b.type !== 'text' || typeof b.text !== 'string') return malformed(`system[${i}]`, 'a text block {"type": "text", "text": …}', b);
    if (b.cache_control !== undefined) dropped.add('system[].cache_control');
    texts.push(b.text);
  }
  return ok(texts.join('\n\n'));
}

/** One Messages turn as one or more chat messages (tool results become `tool` messages, placed first). */
function message(turn: Json, at: string, dropped: Dropped): Result<Json[], ProxyError> {
  const role = turn.role;
  if (role !== 'user' && role !== 'assistant') return malformed(`${at}.role`, '"user" or "assistant"', role);
  if (typeof turn.content === 'string') return ok([{ role, content: turn.content }]);
  if (!Array.isArray(turn.content)) return malformed(`${at}.content`, 'a string or an array of content blocks', turn.content);
  const parts: Json[] = [];
  const toolCalls: Json[] = [];
  const toolMessages: Json[] = [];
  for (let i = 0; i < turn.content.length; i++) {
    const b: unknown = turn.content[i];
    const where = `${at}.content[${i}]`;
    if (!isObject(b)) return malformed(where, 'a content block object', b);
    if (b.cache_control !== undefined) dropped.add('messages[].content[].cache_control');
    switch (b.type) {
      case 'text':
        if (typeof b.text !== 'string') return malformed(`${where}.text`, 'a string', b.text);
        if (b.citations !== undefined) dropped.add('messages[].content[].citations');
        parts.push({ type: 'text', text: b.text });
        break;
      case 'image': {
        const image = imagePart(b.source, `${where}.source`);
        if (!image.ok) return image;
        parts.push(image.value);
        break;
      }
      case 'tool_use':
        if (role !== 'assistant') return malformed(`${where}.type`, 'a block a user turn may hold (tool_use is the assistant\'s)', b.type);
        if (typeof b.id !== 'string' || typeof b.name !== 'string') return malformed(where, 'a tool_use block with string "id" and "name"', b);
        toolCalls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
        break;
      case 'tool_result': {
        if (typeof b.tool_use_id !== 'string') return malformed(`${where}.tool_use_id`, 'a string', b.tool_use_id);
        const content = toolResultText(b.content, `${where}.content`);
        if (!content.ok) return content;
        // A chat tool message has no error flag: the model reads the failure from its text.
        toolMessages.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error === true ? `Error: ${content.value}` : content.value });
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        // An earlier turn's reasoning, sent back for Anthropic's models to verify; a chat provider takes none.
        dropped.add(`messages[].content[].${b.type}`);
        break;
      default:
        return refused(`${where}.type`, `content blocks of type ${JSON.stringify(b.type)} have no counterpart in the chat-completion format (text, image, tool_use and tool_result do)`);
    }
  }
  const out: Json[] = [...toolMessages];
  if (role === 'assistant') {
    if (parts.length > 0 || toolCalls.length > 0) {
      const text = parts.map((p) => p.text as string).join('');
      out.push(toolCalls.length === 0 ? { role, content: text } : { role, content: text === '' ? null : text, tool_calls: toolCalls });
    }
  } else if (parts.length > 0) {
    // A plain string when it is only text: every chat server takes that, not all take parts.
    out.push({ role, content: parts.every((p) => p.type === 'text') ? parts.map((p) => p.text as string).join('') : parts });
  }
  return ok(out);
}

function imagePart(source: unknown, at: string): Result<Json, ProxyError> {
  if (!isObject(source)) return malformed(at, 'an image source object', source);
  if (source.type === 'base64' && typeof source.data === 'string' && typeof source.media_type === 'string') {
    return ok({ type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } });
  }
  if (source.type === 'url' && typeof source.url === 'string') return ok({ type: 'image_url', image_url: { url: source.url } });
  return refused(`${at}.type`, 'images are mapped from base64 data (with media_type) or a url; other sources (files) have no counterpart');
}

/** A tool result's content: a string, or text blocks joined (a chat tool message carries text only). */
function toolResultText(content: unknown, at: string): Result<string, ProxyError> {
  if (content === undefined) return ok('');
  if (typeof content === 'string') return ok(content);
  if (!Array.isArray(content)) return malformed(at, 'a string or an array of content blocks', content);
  const texts: string[] = [];
  for (let i = 0; i < content.length; i++) {
    const b: unknown = content[i];
    if (!isObject(b) || b.type !== 'text' || typeof b.text !== 'string') {
      return refused(`${at}[${i}]`, 'a tool result becomes a chat "tool" message, which carries text only; images and documents in tool results have no counterpart');
    }
    texts.push(b.text);
  }
  return ok(texts.join('\n'));
}

function toolsOf(tools: unknown, dropped: Dropped): Result<Json[], ProxyError> {
  if (!Array.isArray(tools)) return malformed('tools', 'an array of tools', tools);
  const out: Json[] = [];
  for (let i = 0; i < tools.length; i++) {
    const t: unknown = tools[i];
    if (!isObject(t)) return malformed(`tools[${i}]`, 'a tool object', t);
    if (t.type !== undefined && t.type !== 'custom') {
      return refused(`tools[${i}].type`, `${JSON.stringify(t.type)} is a tool Anthropic's API runs itself; an OpenAI-format provider has only function tools (give the tool an input_schema instead)`);
    }
    if (typeof t.name !== 'string') return malformed(`tools[${i}].name`, 'a string', t.name);
    if (!isObject(t.input_schema)) return malformed(`tools[${i}].input_schema`, 'a JSON schema object', t.input_schema);
    if (t.cache_control !== undefined) dropped.add('tools[].cache_control');
    const fn: Json = { name: t.name, parameters: t.input_schema };
    if (typeof t.description === 'string') fn.description = t.description;
    out.push({ type: 'function', function: fn });
  }
  return ok(out);
}

/** `tool_choice` into `out` (`tool_choice`, and `parallel_tool_calls` from `disable_parallel_tool_use`). */
function toolChoice(choice: unknown, out: Json): Result<null, ProxyError> {
  if (!isObject(choice)) return malformed('tool_choice', 'an object such as {"type": "auto"}', choice);
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      if (typeof choice.name !== 'string') return malformed('tool_choice.name', 'a string', choice.name);
      out.tool_choice = { type: 'function', function: { name: choice.name } };
      break;
    default:
      return malformed('tool_choice.type', '"auto", "any", "tool" or "none"', choice.type);
  }
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return ok(null);
}
