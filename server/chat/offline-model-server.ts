/**
 * The built-in offline model as its own OpenAI-compatible HTTP server on a loopback port, so the
 * agent reaches it through ChatOpenAI exactly as it would reach vLLM, Ollama or OpenAI.
 * @module
 */
import Fastify from 'fastify';
import { offlineModelRoutes } from '../agent/index.ts';

export interface OfflineModelServer {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startOfflineModelServer(options: { delayMs: number; modelName: string }): Promise<OfflineModelServer> {
  const app = Fastify({ logger: false });
  await app.register(offlineModelRoutes, { delayMs: options.delayMs, modelName: options.modelName });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { baseUrl: `${address}/v1`, close: () => app.close() };
}
