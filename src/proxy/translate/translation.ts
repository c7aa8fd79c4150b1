/**
 * Which requests are translated, and into what (SPEC §9a): the one place that pairs
 * an endpoint with a provider format it does not speak. A pair not listed here is
 * refused as before (400 unsupported_format).
 */
import type { ProviderFormat } from '../../config/proxy-schema.js';
import { ok, type Result } from '../../kernel/result.js';
import type { Endpoint } from '../routes.js';
import type { ProxyError } from '../errors.js';
import type { BodyTranslation } from '../relay/body-translation.js';
import { answerPlug } from './answer-plug.js';
import { chatToResponsesAnswer, type ResponsesContext } from './chat-to-responses-answer.js';
import { ChatToResponsesStream } from './chat-to-responses-stream.js';
import { responsesToChatRequest } from './responses-to-chat-request.js';
import { chatToMessagesAnswer, type MessagesContext } from './chat-to-messages-answer.js';
import { ChatToMessagesStream } from './chat-to-messages-stream.js';
import { chatToMessagesRequest } from './chat-to-messages-request.js';
import { countTokensAnswer, countTokensError, countTokensRequest, tokenizePath } from './count-tokens.js';
import { messagesToChatAnswer } from './messages-to-chat-answer.js';
import { messagesToChatRequest } from './messages-to-chat-request.js';
import { MessagesToChatStream } from './messages-to-chat-stream.js';
import { isObject, type Json, type TranslatedRequest } from './shape.js';
import type { AnswerTranslation } from './stream.js';

/** One request, translated for a provider of another format: the request's body here, the rest as the relay's plug for it (relay/body-translation.ts). */
export interface Translation extends BodyTranslation {
  /** The format the provider speaks (its credential header follows it). */
  format: ProviderFormat;
  /** The request body in the provider's format, with a target's bare model name. */
  payloadFor(model: string): Buffer;
}

type Translate = (fields: Json) => Result<Translation, ProxyError>;

// The body is written once per target with its model set, rather than written and then spliced.
const payload = (body: Json) => (model: string) => {
  body.model = model;
  return Buffer.from(JSON.stringify(body));
};

const underBase = (path: string) => (basePath: string) => `${basePath}${path}`;

/** A request translated for a provider of `format`: its body written per target, its answers brought back by `answers`. */
function translated(
  format: ProviderFormat,
  upstreamPath: (basePath: string) => string,
  request: TranslatedRequest,
  answers: AnswerTranslation,
  defaultHeaders: Translation['defaultHeaders'] = [],
): Result<Translation, ProxyError> {
  return ok({ kind: 'translated', format, upstreamPath, payloadFor: payload(request.body), dropped: request.dropped, ...answerPlug(answers), defaultHeaders });
}

const messagesToChat: Translate = (fields) => {
  const r = messagesToChatRequest(fields);
  if (!r.ok) return r;
  const stop = Array.isArray(fields.stop_sequences) ? (fields.stop_sequences as unknown[]).filter((s): s is string => typeof s === 'string') : [];
  const ctx: MessagesContext = { stopSequences: stop };
  return translated('openai', underBase('/chat/completions'), r.value, { json: (body) => chatToMessagesAnswer(body, ctx), stream: () => new ChatToMessagesStream(ctx) });
};

// Anthropic's API refuses a request without it; OpenAI's clients never send it.
const ANTHROPIC_VERSION = ['anthropic-version', '2023-06-01'] as const;

const chatToMessages: Translate = (fields) => {
  const r = chatToMessagesRequest(fields);
  if (!r.ok) return r;
  const includeUsage = isObject(fields.stream_options) && fields.stream_options.include_usage === true;
  return translated('anthropic', underBase('/messages'), r.value, { json: messagesToChatAnswer, stream: () => new MessagesToChatStream(includeUsage) }, [ANTHROPIC_VERSION]);
};

const responsesToChat: Translate = (fields) => {
  const r = responsesToChatRequest(fields);
  if (!r.ok) return r;
  const ctx: ResponsesContext = { request: fields };
  return translated('openai', underBase('/chat/completions'), r.value, { json: (body) => chatToResponsesAnswer(body, ctx), stream: () => new ChatToResponsesStream(ctx) });
};

const countTokens: Translate = (fields) => {
  const r = countTokensRequest(fields);
  if (!r.ok) return r;
  // /tokenize never streams: a stream would be a provider's mistake, ended as a cut.
  return translated('openai', tokenizePath, r.value, { json: countTokensAnswer, stream: () => new ChatToMessagesStream({ stopSequences: [] }), error: countTokensError });
};

/** A translation: the provider format it produces, and how. */
export interface Via {
  to: ProviderFormat;
  translate: Translate;
}

const RESPONSES_TO_CHAT: Via = { to: 'openai', translate: responsesToChat };

/** Endpoint path → the provider format it is translated to when the provider does not take the endpoint's own. */
const TRANSLATIONS: ReadonlyMap<string, Via> = new Map([
  ['/messages', { to: 'openai', translate: messagesToChat }],
  ['/chat/completions', { to: 'anthropic', translate: chatToMessages }],
  ['/messages/count_tokens', { to: 'openai', translate: countTokens }],
]);

/** What translation needs to know of a provider: the formats it speaks (route/providers.ts' ProviderEntry has them). */
export interface SpokenFormats {
  formats: readonly ProviderFormat[];
  /** `responses: chat`: no Responses API of its own. */
  responsesViaChat?: boolean;
}

/** Whether a provider takes requests of `endpoint` as they are (an unknown one is left to the routing to refuse). */
export function speaks(entry: SpokenFormats | undefined, endpoint: Endpoint): boolean {
  if (entry === undefined) return true;
  // Only the Responses API's create is translated; its other routes (input_tokens, compact) go as they are, for the provider to answer.
  if (entry.responsesViaChat === true && endpoint.path === '/responses') return false;
  return entry.formats.includes(endpoint.format);
}

/** The translation of requests to `endpointPath` for the provider, or null when there is none. */
export function translationFor(endpointPath: string, entry: SpokenFormats | undefined): Via | null {
  if (entry === undefined) return null;
  if (endpointPath === '/responses') return entry.responsesViaChat === true && entry.formats.includes('openai') ? RESPONSES_TO_CHAT : null;
  const t = TRANSLATIONS.get(endpointPath);
  return t !== undefined && entry.formats.includes(t.to) ? t : null;
}
