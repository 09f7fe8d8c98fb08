/**
 * Pure decisions about approvals: what a confirm, a deny or a new message does to a pending one,
 * and the words a user sees. SQL keeps the atomic transition (db/approvals.ts).
 * @module
 */
import { hashJson } from '../canonical-json.ts';
import type { ChatAction } from './input.ts';

export type ApprovalOutcome = 'approved' | 'denied' | 'expired';
/** The wire's `confirm_resolved.result`. */
export type ResolvedResult = 'confirmed' | 'denied' | 'expired';
export type ApprovalDecision = { approved: true } | { approved: false; reason: 'denied' | 'expired' | 'superseded' };

export interface Resolution {
  outcome: ApprovalOutcome;
  result: ResolvedResult;
  reason: string;
  decision: ApprovalDecision;
}

/**
 * What resolving a pending approval means: past its expiry it is `expired` whatever was asked;
 * a new message (`action: null`) denies it as superseded, so the thread never breaks.
 */
export function resolvePendingApproval({ expiresAt, action, now }: { expiresAt: Date; action: ChatAction | null; now: Date }): Resolution {
  if (now.getTime() >= expiresAt.getTime()) {
    return { outcome: 'expired', result: 'expired', reason: 'approval_timeout', decision: { approved: false, reason: 'expired' } };
  }
  if (action === 'confirm') return { outcome: 'approved', result: 'confirmed', reason: 'user_confirmed', decision: { approved: true } };
  if (action === 'deny') return { outcome: 'denied', result: 'denied', reason: 'user_denied', decision: { approved: false, reason: 'denied' } };
  return { outcome: 'denied', result: 'denied', reason: 'superseded_by_new_message', decision: { approved: false, reason: 'superseded' } };
}

/** A stable hash of the arguments (key order does not matter), stored with the approval. */
export const hashArgs = hashJson;

const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);

/** The question a confirmation card asks, naming the action and its arguments. */
export function approvalPrompt(tool: string, args: Record<string, unknown>): string {
  const service = str(args.service) ?? 'the service';
  switch (tool) {
    case 'deploy_service':
      return `Deploy ${service} version ${str(args.version) ?? '?'} to ${str(args.environment) ?? '?'}?`;
    case 'start_maintenance': {
      const minutes = str(args.duration_minutes);
      const reason = str(args.reason);
      return `Start maintenance on ${service}${minutes ? ` for ${minutes} minutes` : ''}${reason ? ` (reason: ${reason})` : ''}?`;
    }
    case 'end_maintenance':
      return `End the active maintenance on ${service}?`;
    default: {
      const shown = Object.entries(args).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
      return `Run ${tool}${shown.length ? ` with ${shown.join(', ')}` : ''}?`;
    }
  }
}
