/**
 * An organization's own API, as the OpenAPI tool source (issue 41) meets it: a small Fastify
 * service whose OpenAPI document @fastify/swagger produces from its own routes (served at
 * /openapi.json), and which trusts nothing Airlock says without checking it, as the README tells
 * a backend to: both JWTs verified with jose against Airlock's JWKS (ES256, issuer, audience, `typ`,
 * expiry), then its own RBAC on the user token's `role` (viewers read, operators and admins
 * refund). A refund honours Idempotency-Key: a repeated key answers the first result again, and
 * nothing is refunded twice. Every request is recorded (raw URL, headers, verified claims).
 */
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { AddressInfo } from 'node:net';

export interface BackendRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  service?: JWTPayload;
  user?: JWTPayload;
  refused?: string;
}

export interface OpenApiBackend {
  url: string;
  seen: BackendRequest[];
  /** Refunds done, by invoice id (a repeated Idempotency-Key does not count). */
  refunds: Map<string, number>;
  /** Points the JWT checks at Airlock (known only once it has started). */
  trust(airlockUrl: string, issuer: string, audience: string): void;
  close(): Promise<void>;
}

const WRITERS = new Set(['operator', 'admin']);

export async function startOpenApiBackend(): Promise<OpenApiBackend> {
  const seen: BackendRequest[] = [];
  const refunds = new Map<string, number>();
  const answered = new Map<string, unknown>();
  const hung: Array<(body: unknown) => void> = [];
  let trust: { jwks: ReturnType<typeof createRemoteJWKSet>; issuer: string; audience: string } | null = null;
  const app: FastifyInstance = Fastify({ logger: false, forceCloseConnections: true });
  await app.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 'billing', version: '1.0.0' } } });

  /** The README's check, as a backend writes it: both tokens, their `typ`s, then the user's role. */
  async function verify(request: FastifyRequest, record: BackendRequest): Promise<JWTPayload> {
    if (!trust) throw Object.assign(new Error('no trust configured'), { statusCode: 503 });
    const service = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
    const user = String(request.headers['x-user-jwt'] ?? '');
    const options = { issuer: trust.issuer, audience: trust.audience, algorithms: ['ES256'], maxTokenAge: '60s' };
    try {
      record.service = (await jwtVerify(service, trust.jwks, { ...options, typ: 'backend-service+jwt' })).payload;
      record.user = (await jwtVerify(user, trust.jwks, { ...options, typ: 'backend-user+jwt' })).payload;
    } catch (error) {
      record.refused = (error as Error).message;
      throw Object.assign(new Error(`token refused: ${(error as Error).message}`), { statusCode: 401 });
    }
    return record.user;
  }

  app.addHook('onRequest', async (request) => {
    (request as FastifyRequest & { record?: BackendRequest }).record = { method: request.method, url: request.raw.url ?? '', headers: { ...request.headers } };
    seen.push((request as FastifyRequest & { record: BackendRequest }).record);
  });
  const recordOf = (request: FastifyRequest) => (request as FastifyRequest & { record: BackendRequest }).record;

  app.get('/invoices/:id', {
    schema: { operationId: 'getInvoice', summary: 'Get an invoice', params: { type: 'object', properties: { id: { type: 'integer', description: 'The invoice id' } }, required: ['id'] } },
  }, async (request) => {
    const user = await verify(request, recordOf(request));
    const { id } = request.params as { id: number };
    return { id, amount: 120, currency: 'EUR', read_by: user.preferred_username, refunds: refunds.get(String(id)) ?? 0 };
  });

  app.get('/customers/:name', {
    schema: { operationId: 'getCustomer', summary: 'Get a customer by name', params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
  }, async (request) => {
    await verify(request, recordOf(request));
    return { name: (request.params as { name: string }).name };
  });

  app.post('/invoices/:id/refund', {
    schema: {
      operationId: 'refundInvoice', summary: 'Refund an invoice',
      params: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
      querystring: { type: 'object', properties: { reason: { type: 'string' } } },
      headers: { type: 'object', properties: { 'x-request-note': { type: 'string' } } },
    },
  }, async (request, reply) => {
    const user = await verify(request, recordOf(request));
    if (!WRITERS.has(String(user.role))) return reply.code(403).send({ error: `role ${String(user.role)} may not refund` });
    const key = String(request.headers['idempotency-key'] ?? '');
    if (key && answered.has(key)) return answered.get(key);
    const { id } = request.params as { id: number };
    refunds.set(String(id), (refunds.get(String(id)) ?? 0) + 1);
    const result = { refunded: id, by: user.preferred_username, approval_id: user.approval_id ?? null };
    if (key) answered.set(key, result);
    return result;
  });

  app.post('/invoices', {
    schema: { operationId: 'createInvoice', summary: 'Create an invoice', body: { type: 'object', properties: { amount: { type: 'number' }, customer: { type: 'string' } }, required: ['amount'] } },
  }, async (request) => {
    const user = await verify(request, recordOf(request));
    if (!WRITERS.has(String(user.role))) throw Object.assign(new Error('forbidden'), { statusCode: 403 });
    return { created: request.body, note: request.headers['x-request-note'] ?? null };
  });

  // A redirect to another origin (the test's own listener): the source must not follow it.
  app.get('/elsewhere', { schema: { operationId: 'goElsewhere', summary: 'Moved', querystring: { type: 'object', properties: { to: { type: 'string' } } } } }, async (request, reply) =>
    reply.redirect(String((request.query as { to?: string }).to ?? '/admin'), 302));

  // A long answer (the model reads it cut, with a note) and one that never comes (the call times out).
  app.get('/reports/big', { schema: { operationId: 'getBigReport', summary: 'A long report' } }, async () => ({ text: 'x'.repeat(5_000) }));
  app.get('/reports/never', { schema: { operationId: 'getNeverReport', summary: 'A report that never comes' } }, () => new Promise((resolve) => hung.push(resolve)));

  // Never declared in the document: a path traversal reaching it would be recorded here.
  app.get('/admin', { schema: { hide: true } }, async () => ({ admin: true }));
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
    seen,
    refunds,
    trust(airlockUrl, issuer, audience) {
      trust = { jwks: createRemoteJWKSet(new URL(`${airlockUrl}/api/auth/jwks.json`)), issuer, audience };
    },
    async close() {
      for (const answer of hung) answer({ late: true });
      await app.close();
    },
  };
}
