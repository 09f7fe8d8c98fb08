/**
 * An OpenAPI document's operations as tools (issue 41), pure. One operation is one tool:
 * - named `<server>_<operationId split at lower→upper boundaries, sanitized>` (`refundInvoice` ->
 *   `billing_refund_invoice`, which the offline model finds by its words), or without an
 *   operationId `<server>_<method>_<path segments without braces>`; at most 64 characters;
 * - its arguments flat: path, query and header parameters by name, plus `body` for a JSON request
 *   body; header parameters the model must never set (credentials, Host, the JWT and idempotency
 *   headers) and cookie parameters are left out of the schema, so they are never sent;
 * - its default action from the method (GET, HEAD, OPTIONS allow; others require approval), which
 *   `x-airlock-action` overrides and the policy file ranks above.
 * An operation whose schema still holds a `$ref` (a cycle the parser left) or nests deeper than 64
 * levels, or whose name another operation took, is down with the reason; the others are tools.
 * @module
 */
import type { ToolAction } from '../../policy/index.ts';
import { sanitizeName } from '../mcp/names.ts';
import { jsonDepth, MAX_SCHEMA_DEPTH } from '../mcp/schema-depth.ts';
import type { OpenApiDocument } from './document.ts';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const ACTIONS = new Set<ToolAction>(['allow', 'caution', 'require_approval', 'deny']);
/** Headers only the gateway sets, whatever the document declares. */
export const RESERVED_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'host', 'x-user-jwt', 'idempotency-key', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'traceparent']);
const DESCRIPTION_MAX = 1000;

export type ParamIn = 'path' | 'query' | 'header';

export interface OpenApiOperation {
  name: string;
  operationId: string | null;
  method: string;
  /** The path template, `{id}` unfilled. */
  path: string;
  description: string;
  schema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  params: Array<{ name: string; in: ParamIn }>;
  /** The operation takes a JSON body (the `body` argument). */
  body: boolean;
  defaultAction: ToolAction;
}

export interface DownOperation {
  name: string;
  reason: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `refundInvoice` -> `refund_invoice` (lower→upper boundaries, then sanitized). Pure. */
export function operationToolName(server: string, op: { operationId?: string | null; method: string; path: string }): string {
  const tail = op.operationId
    ? op.operationId.replace(/([a-z])([A-Z])/g, '$1_$2')
    : `${op.method}_${op.path.split('/').map((s) => s.replace(/[{}]/g, '')).filter(Boolean).join('_')}`;
  return `${sanitizeName(server)}_${sanitizeName(tail)}`.slice(0, 64);
}

/** Whether any node of `value` is a `$ref` object (a cycle the parser left unresolved). Iterative. */
function holdsRef(value: unknown): boolean {
  const stack = [value];
  const seen = new Set<unknown>();
  while (stack.length) {
    const node = stack.pop();
    if (!isObj(node) && !Array.isArray(node)) continue;
    if (seen.has(node)) continue;
    seen.add(node);
    if (isObj(node) && typeof node.$ref === 'string') return true;
    stack.push(...Object.values(node));
  }
  return false;
}

/** The JSON body's schema: `application/json` or any `+json` media type. */
function jsonBody(requestBody: unknown): { schema: unknown; required: boolean } | null {
  if (!isObj(requestBody) || !isObj(requestBody.content)) return null;
  const type = Object.keys(requestBody.content).find((t) => /^application\/(?:[\w.-]+\+)?json\b/i.test(t));
  if (!type) return null;
  const media = requestBody.content[type];
  return { schema: isObj(media) && media.schema ? media.schema : {}, required: requestBody.required === true };
}

function defaultAction(method: string, extension: unknown): ToolAction | { error: string } {
  if (extension === undefined) return SAFE_METHODS.has(method) ? 'allow' : 'require_approval';
  return ACTIONS.has(extension as ToolAction) ? (extension as ToolAction) : { error: `x-airlock-action ${JSON.stringify(extension)} is not one of allow, caution, require_approval, deny` };
}

/** One operation as a tool, or why it is down. */
function toTool(server: string, path: string, method: string, op: Obj, shared: unknown[]): OpenApiOperation | DownOperation {
  const operationId = typeof op.operationId === 'string' && op.operationId ? op.operationId : null;
  const M = method.toUpperCase();
  const name = operationToolName(server, { operationId, method, path });
  const action = defaultAction(M, op['x-airlock-action']);
  if (typeof action === 'object') return { name, reason: action.error };
  // Operation-level parameters override path-level ones of the same name and place.
  const byKey = new Map<string, Obj>();
  for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) if (isObj(p) && typeof p.name === 'string') byKey.set(`${p.in}:${p.name}`, p);
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const params: OpenApiOperation['params'] = [];
  for (const p of byKey.values()) {
    const where = p.in as string;
    const pname = p.name as string;
    if (where !== 'path' && where !== 'query' && where !== 'header') continue;
    if (where === 'header' && RESERVED_HEADERS.has(pname.toLowerCase())) continue;
    if (pname === 'body' || properties[pname]) return { name, reason: `the parameter "${pname}" is declared twice or is named "body"` };
    const schema = isObj(p.schema) ? p.schema : { type: 'string' };
    properties[pname] = typeof p.description === 'string' ? { ...schema, description: p.description } : schema;
    if (where === 'path' || p.required === true) required.push(pname);
    params.push({ name: pname, in: where });
  }
  const body = jsonBody(op.requestBody);
  if (body) {
    properties.body = body.schema;
    if (body.required) required.push('body');
  }
  const schema = { type: 'object' as const, properties, ...(required.length ? { required } : {}) };
  if (holdsRef(schema)) return { name, reason: 'its schema holds a $ref cycle' };
  if (jsonDepth(schema) > MAX_SCHEMA_DEPTH) return { name, reason: `its schema nests deeper than ${MAX_SCHEMA_DEPTH} levels` };
  const words = [op.summary, op.description].filter((t): t is string => typeof t === 'string' && t.trim() !== '').join(' — ');
  const description = `${(words || operationId || `${M} ${path}`).slice(0, DESCRIPTION_MAX)} (API "${server}": ${M} ${path})`;
  return { name, operationId, method: M, path, description, schema, params, body: body !== null, defaultAction: action };
}

/** Whether the entry's `operations` filter keeps an operation (by operationId or tool name). */
export function keeps(filter: { include?: string[]; exclude?: string[] } | undefined, op: { operationId: string | null; name: string }): boolean {
  const named = (list: string[]) => list.includes(op.name) || (op.operationId !== null && list.includes(op.operationId));
  if (filter?.include) return named(filter.include);
  if (filter?.exclude) return !named(filter.exclude);
  return true;
}

/** Every operation of the document as a tool, or down; names taken by `taken` or an earlier operation are down. */
export function documentOperations(
  server: string,
  doc: OpenApiDocument,
  options: { filter?: { include?: string[]; exclude?: string[] }; taken?: ReadonlySet<string> } = {},
): { tools: OpenApiOperation[]; down: DownOperation[] } {
  const tools: OpenApiOperation[] = [];
  const down: DownOperation[] = [];
  const names = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!isObj(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of HTTP_METHODS) {
      const op = item[method];
      if (!isObj(op)) continue;
      const built = toTool(server, path, method, op, shared);
      if (!keeps(options.filter, { operationId: 'operationId' in built ? built.operationId : typeof op.operationId === 'string' ? op.operationId : null, name: built.name })) continue;
      if (names.has(built.name) || options.taken?.has(built.name)) {
        down.push({ name: built.name, reason: `tool name ${built.name} collides with ${options.taken?.has(built.name) ? 'a tool of another source' : 'another operation'}` });
        continue;
      }
      names.add(built.name);
      if ('reason' in built) down.push(built);
      else tools.push(built);
    }
  }
  return { tools, down };
}
