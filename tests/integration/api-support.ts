/**
 * Shared set-up for the api integration tests: a real server (api role) on a migrated schema,
 * demo-user logins, a service token, and a small fetch wrapper.
 */
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export const DEMO_PASSWORD = 'demo-password-1';
export const SERVICE = { client_id: 'airlock-gateway', client_secret: 'test-service-secret-0123456789' };

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface ApiHarness {
  db: TestDatabase;
  server: TestServer;
  url: string;
  request<T = any>(method: string, path: string, options?: { token?: string; body?: unknown; headers?: Record<string, string> }): Promise<Reply<T>>;
  login(username: string, password?: string): Promise<string>;
  serviceToken(): Promise<string>;
  /** A tool call with both tokens. */
  tool<T = any>(method: string, path: string, options: { user: string; service?: string; body?: unknown; headers?: Record<string, string> }): Promise<Reply<T>>;
  close(): Promise<void>;
}

export async function startApi(env: Record<string, string> = {}): Promise<ApiHarness> {
  const db = await createTestDatabase();
  const server = await startTestServer({ db, roles: ['api'], env });
  let service: string | undefined;
  const request: ApiHarness['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(server.url + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const harness: ApiHarness = {
    db,
    server,
    url: server.url,
    request,
    async login(username, password = DEMO_PASSWORD) {
      const res = await request('POST', '/api/auth/login', { body: { username, password } });
      if (res.status !== 200) throw new Error(`login ${username}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.access_token as string;
    },
    async serviceToken() {
      if (!service) {
        const res = await request('POST', '/api/auth/service-token', { body: SERVICE });
        if (res.status !== 200) throw new Error(`service token: ${res.status}`);
        service = res.body.access_token as string;
      }
      return service!;
    },
    async tool(method, path, options) {
      const token = options.service ?? (await harness.serviceToken());
      return request(method, path, { token, body: options.body, headers: { 'x-user-jwt': options.user, ...options.headers } });
    },
    async close() {
      await server.close();
      await db.drop();
    },
  };
  return harness;
}

/** Audit rows, newest first, straight from the table. */
export async function auditRows(db: TestDatabase, where = 'true', params: unknown[] = []): Promise<any[]> {
  const { rows } = await db.pool.query(`SELECT * FROM audit_log WHERE ${where} ORDER BY id DESC`, params);
  return rows;
}
