/**
 * `?dry_run=true` on an effect route (issue 27 item 3): the same route, so the same token checks and
 * RBAC, but it only reads the state and answers its preview. A dry run never touches the idempotency
 * store (it takes no key: a preview must not eat the deploy's), and its audit row says `preview`.
 * @module
 */
import type { FastifyRequest } from 'fastify';
import { AirlockError } from '../../errors.ts';
import { markPreview } from './hooks.ts';
import type { EffectPreview } from '../../operations/index.ts';

/** True for `?dry_run=true`; `false` or absent is a real call; anything else is a 400. */
export function isDryRun(request: FastifyRequest): boolean {
  const value = (request.query as Record<string, unknown> | undefined)?.dry_run;
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new AirlockError('VALIDATION_ERROR', 'dry_run must be true or false.', { details: [{ path: 'dry_run', message: 'true or false', location: 'query' }] });
}

/** The answer of a dry run: `{dry_run: true, preview}`, audited as `preview`. */
export function previewAnswer(request: FastifyRequest, preview: EffectPreview): { dry_run: true; preview: EffectPreview } {
  markPreview(request);
  return { dry_run: true, preview };
}

/** The precondition header of an approved call: the state hash its preview showed. */
export function ifMatch(request: FastifyRequest): string | undefined {
  const value = request.headers['if-match'];
  return typeof value === 'string' && value.trim() ? value.slice(0, 200) : undefined;
}
