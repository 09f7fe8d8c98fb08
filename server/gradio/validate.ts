/**
 * Join/run body checks as pure functions: the 400 cases (missing session_hash or fn_index) and
 * the 422 cases (unknown endpoint, wrong arity, wrong types). Missing or null values of optional
 * parameters take their defaults.
 * @module
 */
import { hasDefault, parameterName, schemaOf } from './components.ts';
import type { EndpointDefinition } from './types.ts';

/** A rejection: HTTP status, the `detail` text and, when one input is at fault, its parameter name. */
export interface Rejection {
  status: 400 | 422;
  detail: string;
  parameter?: string;
}

/** The parts of a join body the server uses. */
export interface JoinBody {
  fnIndex: number;
  sessionHash: string;
  data: unknown[];
  eventData: unknown;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matches(value: unknown, schema: Record<string, unknown>): boolean {
  const declared = schema.type;
  if (declared === undefined || typeof declared === 'object' && !Array.isArray(declared)) return true;
  const allowed = Array.isArray(declared) ? declared : [declared];
  const actual = jsonType(value);
  return allowed.some((t) => t === actual || (t === 'number' && actual === 'integer') || t === 'any');
}

/** Checks a join (or run) body's envelope. `requireSession` is false for the unqueued run route. */
export function parseEnvelope(body: unknown, requireSession = true): JoinBody | Rejection {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status: 400, detail: 'The body must be a JSON object.' };
  const b = body as Record<string, unknown>;
  if (requireSession && (typeof b.session_hash !== 'string' || b.session_hash.length === 0 || b.session_hash.length > 256)) {
    return { status: 400, detail: 'session_hash is required.' };
  }
  if (requireSession && (typeof b.fn_index !== 'number' || !Number.isInteger(b.fn_index))) return { status: 400, detail: 'fn_index is required.' };
  if (b.data !== undefined && b.data !== null && !Array.isArray(b.data)) return { status: 422, detail: 'data must be an array of input values.' };
  return {
    fnIndex: typeof b.fn_index === 'number' ? b.fn_index : -1,
    sessionHash: typeof b.session_hash === 'string' ? b.session_hash : '',
    data: (b.data as unknown[] | null | undefined) ?? [],
    eventData: b.event_data ?? null,
  };
}

/** Fills defaults and checks arity and types against the endpoint's inputs. */
export function normalizeInputs(endpoint: EndpointDefinition<any>, data: readonly unknown[]): unknown[] | Rejection {
  const inputs = endpoint.inputs;
  if (data.length > inputs.length) {
    return { status: 422, detail: `The endpoint /${endpoint.apiName} takes ${inputs.length} input value(s), got ${data.length}.` };
  }
  const out: unknown[] = new Array(inputs.length);
  for (let i = 0; i < inputs.length; i++) {
    const spec = inputs[i];
    const name = parameterName(spec, i);
    let value = data[i];
    if (value === undefined || value === null) {
      if (hasDefault(spec)) value = spec.default ?? null;
      else if (value === undefined) return { status: 422, detail: `No value provided for required parameter: ${name}`, parameter: name };
      out[i] = value ?? null;
      continue;
    }
    if (!matches(value, schemaOf(spec))) {
      return { status: 422, detail: `Parameter ${name} must be of type ${JSON.stringify(schemaOf(spec).type)}, got ${jsonType(value)}.`, parameter: name };
    }
    out[i] = value;
  }
  return out;
}

/** Whether a check produced a rejection. */
export function isRejection(value: unknown): value is Rejection {
  return typeof value === 'object' && value !== null && 'detail' in value && 'status' in value;
}
