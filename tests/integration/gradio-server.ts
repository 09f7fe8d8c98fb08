/**
 * Test helpers for the gradio integration tests: a bare Fastify app with the plugin and test
 * endpoints on a loopback port, and a raw SSE reader for checking frames on the wire.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { gradioPlugin, type EndpointDefinition, type GradioPluginOptions } from '../../server/gradio/index.ts';

export interface GradioTestServer {
  app: FastifyInstance;
  /** Origin, e.g. http://127.0.0.1:1234 */
  origin: string;
  /** Origin + prefix: what clients connect to. */
  url: string;
  dataDir: string;
  close(): Promise<void>;
}

export async function startGradioServer(
  endpoints: EndpointDefinition<any>[],
  options: Partial<GradioPluginOptions<any>> & { prefix?: string } = {},
): Promise<GradioTestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'airlock-gradio-'));
  // Loopback is the trusted proxy here, as in a deployment behind a local nginx.
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024, trustProxy: ['127.0.0.1', '::1'] });
  const prefix = options.prefix ?? '/api/agent/gradio';
  await app.register(gradioPlugin, {
    authenticate: async () => ({ user: 'anonymous' }),
    uploadMaxBytes: 1024 * 1024,
    dataDir,
    ...options,
    prefix,
    endpoints,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address() as { port: number };
  const origin = `http://127.0.0.1:${address.port}`;
  return {
    app,
    origin,
    url: origin + prefix,
    dataDir,
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE response to its end (or until `stop` says so), returning the raw text and frames. */
export async function readRawStream(response: Response, stop?: (frames: any[]) => boolean): Promise<{ raw: string; frames: any[] }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  const frames: any[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    frames.length = 0;
    for (const block of raw.split('\n\n').slice(0, -1)) frames.push(JSON.parse(block.slice('data: '.length)));
    if (stop?.(frames)) {
      await reader.cancel();
      break;
    }
  }
  return { raw, frames };
}

/** Joins an event over plain HTTP; returns the status and body. */
export async function joinEvent(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/gradio_api/queue/join?`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
