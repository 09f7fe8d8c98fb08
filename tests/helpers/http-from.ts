/**
 * HTTP requests from a chosen loopback source address (any 127.x.y.z is this machine on Linux),
 * so that tests can play clients that are not the trusted proxy: an "outside" attacker at
 * 127.0.0.7 and its victim at 127.0.0.8 reach nginx or the app exactly as two hosts would.
 *
 *   const res = await httpFrom('127.0.0.7', `${nginx.url}/api/auth/login`, { method: 'POST', json: {...} });
 */
import { request } from 'node:http';

export interface FromReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json(): any;
}

export interface FromOptions {
  method?: string;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string;
  /** Resolve as soon as the headers arrive and drop the connection (endless streams). */
  headersOnly?: boolean;
  /** Milliseconds before the request counts as hung (default 10 s). */
  timeoutMs?: number;
}

/** One request from `localAddress`; the path is sent as written (no URL normalisation). */
export function httpFrom(localAddress: string, url: string, options: FromOptions = {}): Promise<FromReply> {
  const target = new URL(url);
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2)) || '/';
  const body = options.json !== undefined ? JSON.stringify(options.json) : options.body;
  const headers: Record<string, string> = { ...options.headers };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, method: options.method ?? 'GET', path, headers, localAddress, agent: false },
      (res) => {
        if (options.headersOnly) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', json: () => undefined });
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(options.timeoutMs ?? 10_000, () => req.destroy(new Error(`${options.method ?? 'GET'} ${path} hung`)));
    req.on('error', reject);
    req.end(body);
  });
}
