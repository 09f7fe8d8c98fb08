/**
 * A forwarding proxy in front of a service the gateway calls (the api, an OpenAPI backend): when a
 * request matching `trigger` has been read in full, `onTrigger` runs (the test kills the gateway)
 * and the request still goes on, so its effect happens for a caller that is gone.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guarded } from './guarded-handler.ts';

/**
 * A forwarding proxy in front of the api: when a request matching `trigger` has been read in full,
 * `onTrigger` runs (the test kills the gateway) and the request still goes on to the api.
 */
export async function startKillingProxy(target: string, trigger: (req: IncomingMessage) => boolean, onTrigger: () => void) {
  let resolveForwarded!: () => void;
  const forwarded = new Promise<void>((resolve) => (resolveForwarded = resolve));
  const server = createServer(guarded(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const fire = trigger(req);
    if (fire) onTrigger();
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k))) as Record<string, string>;
    const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined });
    const body = Buffer.from(await upstream.arrayBuffer());
    if (fire) resolveForwarded();
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' }).end(body);
  }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, forwarded, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
