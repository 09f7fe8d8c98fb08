/**
 * Reading an `openapi` entry's document (issue 41): a file (relative to the tools file) or an
 * https URL (http only to a loopback host: a man-in-the-middle could rewrite `x-airlock-action`),
 * read once at start. `$ref`s are resolved by a maintained parser (@apidevtools/swagger-parser);
 * a cycle is left in place (`circular: "ignore"`) so that only the operations reaching it are
 * marked down, not the document. OpenAPI 3.0 and 3.1 only: Swagger 2.0 is refused with a reason.
 * Never throws: a document that cannot be used is `{ error }`.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** The parts of an OpenAPI 3.x document this source reads. */
export interface OpenApiDocument {
  openapi: string;
  servers?: Array<{ url?: string }>;
  paths?: Record<string, Record<string, unknown> | undefined>;
}

/** Hosts a plain-http URL may name (a document or a base URL on the same machine). */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Why `url` may not be used as a document or base URL, or null. Pure. */
export function insecureUrl(url: URL): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return null;
  return `${url.href} must be https (plain http only to a loopback host)`;
}

/** Is the reference a URL (else a file path)? */
const isUrl = (ref: string): boolean => /^[a-z][a-z0-9+.-]*:\/\//i.test(ref);

async function readText(ref: string, dir: string, timeoutMs: number): Promise<string> {
  if (!isUrl(ref)) return readFile(isAbsolute(ref) ? ref : resolve(dir, ref), 'utf8');
  const url = new URL(ref);
  const insecure = insecureUrl(url);
  if (insecure) throw new Error(insecure);
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return response.text();
}

/** Why a parsed document is not one this source takes (Swagger 2.0, no version), or null. Pure. */
export function unsupportedVersion(doc: unknown): string | null {
  if (!doc || typeof doc !== 'object') return 'the document is not an object';
  const { swagger, openapi } = doc as { swagger?: unknown; openapi?: unknown };
  if (swagger !== undefined) return `Swagger ${String(swagger)} is not supported: convert the document to OpenAPI 3.0 or 3.1 (e.g. with swagger2openapi)`;
  if (typeof openapi !== 'string' || !/^3\.[01]\./.test(openapi)) return `OpenAPI ${String(openapi ?? '(no version)')} is not supported: 3.0 or 3.1 only`;
  return null;
}

/**
 * Reads, checks and dereferences the document `ref` names. External `$ref`s are not followed from
 * a remote document (it could point the parser anywhere); from a file they may name other files.
 */
export async function loadOpenApiDocument(ref: string, dir: string, timeoutMs: number): Promise<{ doc: OpenApiDocument } | { error: string }> {
  let raw: unknown;
  try {
    const text = await readText(ref, dir, timeoutMs);
    // JSON is YAML, but the JSON parser is many times faster on a large document.
    raw = text.trimStart().startsWith('{') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 1000 });
  } catch (error) {
    return { error: `cannot read the OpenAPI document: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message.split('\n')[0]}` };
  }
  const unsupported = unsupportedVersion(raw);
  if (unsupported) return { error: unsupported };
  try {
    const base = isUrl(ref) ? ref : resolve(dir, ref);
    const options = { resolve: { external: !isUrl(ref), http: false }, dereference: { circular: 'ignore' as const } };
    // Loaded only when a tools file names a document: a gateway without one never pays for the parser.
    const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
    const doc = await SwaggerParser.dereference(base, raw as never, options as never);
    return { doc: doc as unknown as OpenApiDocument };
  } catch (error) {
    return { error: `the OpenAPI document cannot be resolved: ${(error as Error).message.split('\n')[0]}` };
  }
}
