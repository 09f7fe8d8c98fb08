/**
 * The built-in offline model as its own OpenAI-compatible HTTP server on a loopback port, so the
 * agent reaches it through ChatOpenAI exactly as it would reach vLLM, Ollama or OpenAI.
 * @module
 */
import Fastify from 'fastify';
import { offlineModelRoutes } from '../index.ts';

export interface OfflineModelServer {
  baseUrl: string;
  close(): Promise<void>;
}

export async function startOfflineModelServer(options: { delayMs: number; modelName: string }): Promise<OfflineModelServer> {
  // On close, its connections go too: a model stream still open then belongs to a run the shutdown
  // has already stopped, and waiting for it held the process's exit for seconds (past the grace).
  const app = Fastify({ logger: false, forceCloseConnections: true });
  await app.register(offlineModelRoutes, { delayMs: options.delayMs, modelName: options.modelName });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  return { baseUrl: `${address}/v1`, close: () => app.close() };
}
