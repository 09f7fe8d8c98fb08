/**
 * An OpenAI-compatible endpoint in front of the offline model, for the tests of a model that
 * misbehaves: each request is offered to `intercept` first (it answers, or cuts, the request its
 * fault is about and returns true); every other request is forwarded to `target` unchanged,
 * streamed back as it comes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guarded } from './guarded-handler.ts';

export type ModelIntercept = (req: IncomingMessage, res: ServerResponse, body: Buffer) => boolean | Promise<boolean>;

export interface ModelProxy {
  /** The base URL to give as OPENAI_BASE_URL (…/v1). */
  url: string;
  close(): Promise<void>;
}

/** Starts it; `target` is the offline model's base URL. */
export async function startModelProxy(target: string, intercept: ModelIntercept): Promise<ModelProxy> {
  const server = createServer(
    guarded(async (req, res, signal) => {
      const chunks: Buffer[] = [];
      for await (const part of req) chunks.push(part as Buffer);
      const body = Buffer.concat(chunks);
      if (await intercept(req, res, body)) return;
      const upstream = await fetch(`${target}${req.url!.replace(/^\/v1/, '')}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body: chunks.length ? body : undefined,
        signal,
      });
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
      for await (const part of upstream.body as unknown as AsyncIterable<Uint8Array>) res.write(part);
      res.end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
