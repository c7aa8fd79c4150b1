import type { ProviderFormat } from '../config/proxy-schema.js';
import type { ErrorFamily } from './errors.js';

/** One POST endpoint routed by its body's `model`; the table below is the whole list. */
export interface Endpoint {
  /** The path under `/v1`, the same on the provider (under its base path); also the `endpoint` of log lines and metrics. */
  path: string;
  /** The request format: only providers that take it get the request. */
  format: ProviderFormat;
  /** Whose error shape the endpoint's clients read. */
  family: ErrorFamily;
  /** Fields besides `model` the proxy itself relies on (everything else is the provider's to judge). */
  lists?: readonly string[];
  /** The body: JSON (the default), or a multipart/form-data upload whose `model` is a form field (multipart.ts). */
  body?: 'json' | 'multipart';
  /** The largest body taken, when not the proxy's default (16 MiB). */
  maxBytes?: number;
}

// OpenAI's own limit for an audio upload; vLLM's default is the same.
const AUDIO_UPLOAD_BYTES = 25 * 1024 * 1024;

export const ENDPOINTS: readonly Endpoint[] = [
  { path: '/chat/completions', format: 'openai', family: 'openai', lists: ['messages'] },
  { path: '/responses', format: 'openai', family: 'openai' },
  // The Responses API's token count and compaction (`responses.inputTokens.count`, `responses.compact`).
  { path: '/responses/input_tokens', format: 'openai', family: 'openai' },
  { path: '/responses/compact', format: 'openai', family: 'openai' },
  { path: '/embeddings', format: 'openai', family: 'openai' },
  { path: '/completions', format: 'openai', family: 'openai' },
  // The other JSON endpoints of OpenAI's API that model servers serve (vLLM, LocalAI,
  // llama.cpp, text-embeddings-inference), and vLLM's and Jina's rerank and score.
  { path: '/moderations', format: 'openai', family: 'openai' },
  { path: '/images/generations', format: 'openai', family: 'openai' },
  { path: '/audio/speech', format: 'openai', family: 'openai' },
  { path: '/rerank', format: 'openai', family: 'openai' },
  { path: '/score', format: 'openai', family: 'openai' },
  // Uploads: the audio file and `model` are form fields (Whisper on vLLM, LocalAI, faster-whisper servers).
  { path: '/audio/transcriptions', format: 'openai', family: 'openai', body: 'multipart', maxBytes: AUDIO_UPLOAD_BYTES },
  { path: '/audio/translations', format: 'openai', family: 'openai', body: 'multipart', maxBytes: AUDIO_UPLOAD_BYTES },
  { path: '/messages', format: 'anthropic', family: 'anthropic', lists: ['messages'] },
  // What Anthropic's SDK (messages.countTokens) and Claude Code call before a long prompt.
  { path: '/messages/count_tokens', format: 'anthropic', family: 'anthropic', lists: ['messages'] },
];
