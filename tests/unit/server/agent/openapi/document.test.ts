/**
 * Reading an OpenAPI document (server/agent/openapi/document.ts) and its operations as tools
 * (operations.ts): 3.0 and 3.1 with `$ref`s resolved by swagger-parser, Swagger 2.0 refused with a
 * reason, the naming rule, the flat arguments, the method defaults and `x-airlock-action`,
 * include/exclude, and a `$ref` cycle, deep nesting or a name collision marking one operation down.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insecureUrl, loadOpenApiDocument, unsupportedVersion, type OpenApiDocument } from '../../../../../server/agent/openapi/document.ts';
import { documentOperations, operationToolName } from '../../../../../server/agent/openapi/operations.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'openapi-doc-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const billing = (version: string) => ({
  openapi: version,
  info: { title: 'billing', version: '1' },
  servers: [{ url: 'https://billing.internal/v1' }],
  components: {
    parameters: { Id: { name: 'id', in: 'path', required: true, schema: { type: 'integer' } } },
    schemas: {
      Refund: { type: 'object', properties: { reason: { type: 'string' } } },
      Node: { type: 'object', properties: { child: { $ref: '#/components/schemas/Node' } } },
    },
  },
  paths: {
    '/invoices/{id}': { parameters: [{ $ref: '#/components/parameters/Id' }], get: { operationId: 'getInvoice', summary: 'Get an invoice' } },
    '/invoices/{id}/refund': {
      post: {
        operationId: 'refundInvoice', summary: 'Refund an invoice',
        parameters: [{ $ref: '#/components/parameters/Id' }, { name: 'Authorization', in: 'header', schema: { type: 'string' } }, { name: 'X-Note', in: 'header', schema: { type: 'string' } }, { name: 'sid', in: 'cookie', schema: { type: 'string' } }],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Refund' } } } },
      },
    },
    '/trees': { post: { operationId: 'plantTree', requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } } },
    '/reports/{year}/summary': { get: { summary: 'No operation id' }, delete: { operationId: 'purge', 'x-airlock-action': 'deny' } },
    '/status': { post: { operationId: 'ping', 'x-airlock-action': 'allow' } },
  },
});

async function load(doc: unknown, name = 'doc.json') {
  await writeFile(join(dir, name), JSON.stringify(doc));
  return loadOpenApiDocument(name, dir, 5_000);
}

describe('the OpenAPI document', () => {
  it.each(['3.0.3', '3.1.0'])('OpenAPI %s: every operation a tool, named by the rule, $refs resolved, a cycle down alone', async (version) => {
    const loaded = await load(billing(version));
    expect('doc' in loaded, JSON.stringify(loaded)).toBe(true);
    const { tools, down } = documentOperations('billing', (loaded as { doc: OpenApiDocument }).doc);
    expect(tools.map((t) => [t.name, t.method, t.defaultAction])).toEqual([
      ['billing_get_invoice', 'GET', 'allow'],
      ['billing_refund_invoice', 'POST', 'require_approval'],
      ['billing_get_reports_year_summary', 'GET', 'allow'],
      ['billing_purge', 'DELETE', 'deny'],
      ['billing_ping', 'POST', 'allow'],
    ]);
    expect(down).toEqual([{ name: 'billing_plant_tree', reason: 'its schema holds a $ref cycle' }]);
    const refund = tools[1];
    // Flat: path parameter, the declared header, the body; never Authorization, never a cookie.
    expect(refund.schema).toEqual({
      type: 'object',
      properties: { id: { type: 'integer' }, 'X-Note': { type: 'string' }, body: { type: 'object', properties: { reason: { type: 'string' } } } },
      required: ['id', 'body'],
    });
    expect(refund.description).toBe('Refund an invoice (API "billing": POST /invoices/{id}/refund)');
  });

  it('a document read from a loopback URL', async () => {
    const http = createServer((_req, res) => res.end(JSON.stringify(billing('3.1.0'))));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    try {
      const loaded = await loadOpenApiDocument(`http://127.0.0.1:${(http.address() as AddressInfo).port}/openapi.json`, dir, 5_000);
      expect(loaded, JSON.stringify(loaded)).toHaveProperty('doc');
    } finally {
      await new Promise<void>((r) => http.close(() => r()));
    }
  });

  it('Swagger 2.0 is refused with a reason; other versions too', async () => {
    expect(await load({ swagger: '2.0', info: {}, paths: {} })).toEqual({ error: expect.stringMatching(/^Swagger 2\.0 is not supported: convert the document to OpenAPI 3\.0 or 3\.1/) });
    expect(unsupportedVersion({ openapi: '4.0.0' })).toMatch(/3\.0 or 3\.1 only/);
    expect(await loadOpenApiDocument('missing.yaml', dir, 5_000)).toEqual({ error: 'cannot read the OpenAPI document: ENOENT' });
  });

  it('a remote document must be https, plain http only on loopback', () => {
    expect(insecureUrl(new URL('http://billing.internal/openapi.json'))).toMatch(/must be https/);
    expect(insecureUrl(new URL('http://127.0.0.1:8080/openapi.json'))).toBeNull();
    expect(insecureUrl(new URL('https://billing.internal/openapi.json'))).toBeNull();
  });

  it('include/exclude by operationId, a collision or deep nesting marks one operation down', async () => {
    const loaded = (await load(billing('3.1.0'))) as { doc: OpenApiDocument };
    expect(documentOperations('billing', loaded.doc, { filter: { include: ['getInvoice'] } }).tools.map((t) => t.name)).toEqual(['billing_get_invoice']);
    expect(documentOperations('billing', loaded.doc, { filter: { exclude: ['purge', 'plantTree'] } }).tools.map((t) => t.name)).not.toContain('billing_purge');
    const taken = documentOperations('billing', loaded.doc, { taken: new Set(['billing_ping']) });
    expect(taken.down).toContainEqual({ name: 'billing_ping', reason: 'tool name billing_ping collides with a tool of another source' });
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 70; i++) deep = { type: 'object', properties: { x: deep } };
    const nested = documentOperations('api', { openapi: '3.1.0', paths: { '/a': { post: { operationId: 'deep', requestBody: { content: { 'application/json': { schema: deep } } } } } } });
    expect(nested.down).toEqual([{ name: 'api_deep', reason: 'its schema nests deeper than 64 levels' }]);
  });

  it('names: lower→upper boundaries split, then sanitized; without an operationId, the method and path', () => {
    expect(operationToolName('billing', { operationId: 'refundInvoice', method: 'post', path: '/x' })).toBe('billing_refund_invoice');
    expect(operationToolName('Billing API', { operationId: 'get-HTTPStatus', method: 'get', path: '/x' })).toBe('billing_api_get_httpstatus');
    expect(operationToolName('billing', { method: 'post', path: '/invoices/{id}/refund' })).toBe('billing_post_invoices_id_refund');
  });
});
