/**
 * Bodies of the curl call API, as pure checks: `POST /call/{api}` takes `{"data": [...]}`
 * (positional, like a join), `POST /call/v2/{api}` takes the parameters by name as the body itself
 * (`{"message": "hi"}`), as upstream's v2 route does.
 * @module
 */
import { parameterName } from './components.ts';
import type { EndpointDefinition } from './types.ts';
import type { Rejection } from './validate.ts';

/** The positional values of a v1 body (its `session_hash` is not the call's session: every call gets one of its own; see routes/call.ts). */
export function positionalArgs(body: unknown): { data: unknown[] } | Rejection {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status: 422, detail: 'The body must be a JSON object with a `data` array.' };
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.data)) return { status: 422, detail: '`data` must be an array of input values.' };
  return { data: b.data };
}

/** A v2 body (parameters by name) as positional values; unknown names are a 422. */
export function keywordArgs(endpoint: EndpointDefinition<any>, body: unknown): { data: unknown[] } | Rejection {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status: 422, detail: 'The body must be a JSON object of parameters by name.' };
  const names = endpoint.inputs.map((spec, i) => parameterName(spec, i));
  const unknown = Object.keys(body).filter((key) => !names.includes(key));
  if (unknown.length > 0) return { status: 422, detail: `Unknown parameter(s) for /${endpoint.apiName}: ${unknown.join(', ')}. Parameters: ${names.join(', ')}.`, parameter: unknown[0] };
  // Missing names stay undefined: normalizeInputs applies defaults or reports the required one.
  return { data: names.map((name) => (body as Record<string, unknown>)[name]) };
}
