/**
 * A built-in tool's preview (issue 27 item 3): the api's dry run of the same request, asked before
 * the approval pause, and the re-ask after the api refused an approved call because the state it
 * previewed changed (412 PRECONDITION_FAILED).
 * @module
 */
import { isAirlockError } from '../../errors.ts';
import type { EffectPreview } from '../../operations/index.ts';
import type { ApprovalRequest } from '../types.ts';
import { callBackend, type BackendRequest } from './backend.ts';
import type { Span } from '../../telemetry/index.ts';
import type { ToolContext } from './context.ts';

/** How often one call asks again after a state change before it gives up with the 412. */
export const MAX_STATE_CHANGES = 3;

/** A preview as the api answers it, or null for anything else. */
export function asPreview(value: unknown): EffectPreview | null {
  const p = (value as { preview?: Partial<EffectPreview> } | null)?.preview;
  if (!p || typeof p.summary !== 'string' || typeof p.state_hash !== 'string') return null;
  return { summary: p.summary, state_hash: p.state_hash, ...(p.details && typeof p.details === 'object' ? { details: p.details } : {}) };
}

/**
 * The dry run of `req`: with no tool call id, so neither X-Tool-Call-Id nor Idempotency-Key goes
 * out (a preview must never take the key of the call it previews). A failed preview is no preview:
 * the call itself will answer the error after the approval.
 */
export async function backendPreview(ctx: ToolContext, req: BackendRequest, signal?: AbortSignal, span?: Span): Promise<EffectPreview | null> {
  try {
    return asPreview(await callBackend(ctx, { ...req, query: { ...req.query, dry_run: 'true' } }, { signal, span }));
  } catch (error) {
    if (signal?.aborted) throw error;
    return null;
  }
}

export function isStateChanged(error: unknown): boolean {
  return isAirlockError(error) && error.code === 'PRECONDITION_FAILED';
}

/** Whether a preview says the call would do nothing (`details.no_effect`, e.g. no such service): then no grant is offered. */
export function wouldDoNothing(preview: EffectPreview | null): boolean {
  return preview?.details?.no_effect === true;
}

/** The same call asked again, with the fresh preview, marked as replacing the approval the state change closed. */
export function askedAgain(request: ApprovalRequest, preview: EffectPreview | null): ApprovalRequest {
  if (!wouldDoNothing(preview)) return { ...request, preview, replaces: { reason: 'state_changed' } };
  const { grantRule: _dropped, ...rest } = request;
  return { ...rest, preview, grant: null, replaces: { reason: 'state_changed' } };
}
