/** The OpenAI-compatible chat-completion proxy (SPEC §9). */
export type { ProxyDeps, TunnelLookup, TunnelView } from './deps.js';
export { createProxyMetrics, type ProxyMetrics } from './observe/metrics.js';
export { createProxyApp, type ProxyApp } from './app.js';
export { startProxyServer, type ProxyServer } from './server.js';
export { proxySchema, expandEnv, type ProxyConfig, type ProviderConfig } from '../config/proxy-schema.js';
export { v1RefusalJson } from './listener-refusal.js';
