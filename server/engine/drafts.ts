/**
 * Builders for the ledger drafts a turn commits, from the agent's and the approvals' shapes to
 * the event vocabulary. Pure.
 * @module
 */
import type { AgentEvent, GrantUse } from '../agent/index.ts';
import { editOf } from '../approvals/edit.ts';
import type { ApprovalProgress, OpenedApproval, ResolvedApproval } from '../approvals/decide.ts';
import type { EventDraft, RunStatus } from './events.ts';
import type { ErrorField } from '../../src/lib/wire/index.ts';

type ToolResultEvent = Extract<AgentEvent, { type: 'tool_end' | 'tool_error' }>;

/** The grant a call ran under, as tool.call and tool.result carry it. */
const grantUse = (g: GrantUse | undefined) => (g ? { grant_id: g.id, grant_by: g.by, grant_until: g.until } : {});

export function toolCallDraft(runId: string, e: Extract<AgentEvent, { type: 'tool_start' }>): EventDraft {
  return { kind: 'tool.call', payload: { run_id: runId, tool_call_id: e.toolCallId, tool: e.tool, input: e.input, ...(e.policy ? { policy: e.policy } : {}), ...grantUse(e.grant) } };
}

export function toolResultDraft(runId: string, e: ToolResultEvent): EventDraft {
  const base = { run_id: runId, tool_call_id: e.toolCallId, tool: e.tool };
  return e.type === 'tool_end'
    ? { kind: 'tool.result', payload: { ...base, status: 'done', output: e.output, duration_ms: Math.max(0, Math.round(e.durationMs)), ...grantUse(e.grant) } }
    : { kind: 'tool.result', payload: { ...base, status: 'error', error: e.error, ...(e.code ? { code: e.code } : {}) } };
}

export function approvalRequestedDraft(runId: string, a: OpenedApproval): EventDraft {
  return {
    kind: 'approval.requested',
    payload: {
      run_id: runId, approval_id: a.approvalId, tool_call_id: a.toolCallId, tool: a.tool, input: a.input, prompt: a.prompt,
      expires_at: a.expiresAt.toISOString(), timeout_s: a.timeoutS,
      ...(a.policy ? { policy: a.policy } : {}),
      ...(a.approvalsRequired > 1 ? { approvals_required: a.approvalsRequired, ...(a.approvers ? { approvers: a.approvers } : {}) } : {}),
      ...(a.stepUp ? { step_up: a.stepUp } : {}),
      preview: a.preview,
      labels: a.labels,
      grantable: a.grant,
      ...(a.replaces ? { replaces: { approval_id: a.replaces.approvalId, reason: a.replaces.reason } } : {}),
    },
  };
}

export function approvalProgressDraft(runId: string, p: ApprovalProgress): EventDraft {
  return { kind: 'approval.approved', payload: { run_id: runId, approval_id: p.approvalId, by: p.by, approved_count: p.approvedCount, approvals_required: p.approvalsRequired } };
}

/**
 * The approvals a state change closed (issue 27): approved, but the api refused the action (412), so
 * denied / state_changed; each is resolved again on the ledger just before the approval that replaces it.
 */
export function replacedApprovalDrafts(runId: string, opened: OpenedApproval[]): EventDraft[] {
  return opened.flatMap((a) => (a.replaces ? [approvalResolvedDraft(runId, { approvalId: a.replaces.approvalId, result: 'denied', reason: a.replaces.reason })] : []));
}

export function approvalResolvedDraft(runId: string, r: Pick<ResolvedApproval, 'approvalId' | 'result' | 'reason' | 'grantMade'> & { approval?: ResolvedApproval['approval'] }): EventDraft {
  // An approval confirmed with edited arguments says so (issue 27 item 1); a denied edit ran nothing.
  const edited = r.approval && r.result === 'confirmed' ? editOf(r.approval) : null;
  const by = deciderOf(r);
  return { kind: 'approval.resolved', payload: { run_id: runId, approval_id: r.approvalId, result: r.result, reason: r.reason, ...(by ? { by } : {}), ...(edited ? { edited } : {}), ...grantMadeOf(r) } };
}

/**
 * The decider's username of a resolved approval, or undefined (an expiry: nobody). The decision
 * returns the row as `resolveApproval` left it, which carries its decider (read here, not queried
 * again: no query on the confirm path). Issue 37 item 3: "Approved with changes by admin".
 */
export function deciderOf(r: { approval?: ResolvedApproval['approval'] }): string | undefined {
  const decider = (r.approval as { decider?: { username?: unknown } | null } | undefined)?.decider;
  return typeof decider?.username === 'string' && decider.username ? decider.username : undefined;
}

/** What the stored approval card keeps of its decision (issue 37 item 3): who decided, and an edit's arguments before and after. */
export function resolvedCardPatch(r: Pick<ResolvedApproval, 'result' | 'grantMade'> & { approval?: ResolvedApproval['approval'] }): Record<string, unknown> {
  const edited = r.approval && r.result === 'confirmed' ? editOf(r.approval) : null;
  const by = deciderOf(r);
  return { ...(by ? { decided_by: by } : {}), ...(edited ? { edited: { original_args: edited.original_args, args: edited.args } } : {}), ...grantMadeOf(r) };
}

/** The standing grant a confirm made ("Allow … for 1 h", issue 37 item 6), as the event and the stored card keep it. */
function grantMadeOf(r: Pick<ResolvedApproval, 'grantMade'>): { grant_made?: { id: string; match: Record<string, unknown>; ttl_s: number; expires_at: string } } {
  return r.grantMade ? { grant_made: { id: r.grantMade.id, match: r.grantMade.match, ttl_s: r.grantMade.ttl_s, expires_at: r.grantMade.expires_at } } : {};
}

/** The answer segment streamed so far, or nothing when it is empty and nothing marks it. */
export function answerDraft(runId: string, text: string, mark: { cancelled?: true; error?: { code: string; detail: string } } = {}): EventDraft[] {
  if (!text && !mark.cancelled && !mark.error) return [];
  return [{ kind: 'assistant.message', payload: { run_id: runId, text, ...mark } }];
}

export interface RunSummary {
  status: RunStatus;
  turns: number;
  startedAt: number;
  stopReason: string;
  /** `fields`: the arguments a VALIDATION_ERROR is about (an edited confirm's), by path. */
  error?: { code: string; detail: string; fields?: ErrorField[] };
  /** The dead turn this one retried (TurnInput.retryOf). */
  retryOf?: string | null;
}

export function runFinishedDraft(runId: string, s: RunSummary, now = Date.now()): EventDraft {
  return {
    kind: 'run.finished',
    payload: {
      run_id: runId,
      status: s.status,
      turns: s.turns,
      duration_ms: Math.max(0, Math.round(now - s.startedAt)),
      stop_reason: s.stopReason,
      error_code: s.error?.code ?? null,
      ...(s.error ? { error_detail: s.error.detail } : {}),
      ...(s.error?.fields?.length ? { error_fields: s.error.fields } : {}),
      ...(s.retryOf ? { retry_of: s.retryOf } : {}),
    },
  };
}
