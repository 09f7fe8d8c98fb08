/**
 * The generic Gradio server's authenticator contract: null is "not authenticated" (401); a throw
 * is "could not decide" (503 + Retry-After), so clients never drop valid credentials because the
 * identity store had a bad moment. A thrown GradioError keeps its own status and body. Routes that
 * take anonymous callers (heartbeat, cancel/reset by the session+event pair) go on as anonymous.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceUnavailableError, type EndpointDefinition } from '../../server/gradio/index.ts';
import { startGradioServer, type GradioTestServer } from './gradio-server.ts';

const echo: EndpointDefinition = {
  apiName: 'echo',
  inputs: [{ label: 'text', component: 'textbox' }],
  outputs: [{ label: 'out', component: 'textbox' }],
  handler: async ({ data }) => [data[0]],
};

let server: GradioTestServer;
beforeAll(async () => {
  server = await startGradioServer([echo], {
    authenticate: async (headers) => {
      if (headers.authorization === 'down') throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      if (headers.authorization === 'typed') throw new ServiceUnavailableError('Store is down.', { extra: { error: { code: 'X_DOWN' } }, retryAfterS: 9 });
      return headers.authorization === 'good' ? { user: 'ann' } : null;
    },
  });
});
afterAll(() => server?.close());

const ROUTES: [string, string][] = [
  ['GET', '/config'], ['GET', '/gradio_api/info'], ['POST', '/gradio_api/queue/join'], ['POST', '/gradio_api/upload'],
  ['GET', '/gradio_api/file=x'], ['POST', '/gradio_api/run/echo'],
];
const request = (method: string, path: string, authorization: string) =>
  fetch(server.url + path, { method, headers: { 'content-type': 'application/json', authorization }, body: method === 'POST' ? '{}' : undefined });

describe('authenticate() that throws', () => {
  it('answers 503 with Retry-After on every authenticated route, never 401, and leaks no cause', async () => {
    for (const [method, path] of ROUTES) {
      const response = await request(method, path, 'down');
      expect([path, response.status]).toEqual([path, 503]);
      expect(response.headers.get('retry-after')).toBe('5');
      const body = await response.json();
      expect(body).toEqual({ detail: 'Service temporarily unavailable.' });
    }
  });

  it('keeps the status, body and Retry-After of a thrown ServiceUnavailableError', async () => {
    const response = await request('GET', '/config', 'typed');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('9');
    expect(await response.json()).toEqual({ detail: 'Store is down.', error: { code: 'X_DOWN' } });
  });

  it('still answers 401 for null and 200 for an identity (control)', async () => {
    expect((await request('GET', '/config', 'bad')).status).toBe(401);
    expect((await request('GET', '/config', 'good')).status).toBe(200);
  });
});
