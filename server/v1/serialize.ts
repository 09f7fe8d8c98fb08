/**
 * Wire shapes of runs, traces and approvals (seed 000 field names, snake_case). Pure.
 * @module
 */
import type { AgentRun } from '../db/agent-runs.ts';
import type { ApprovalRecord } from '../db/approval-records.ts';
import type { AgentEventV1 } from './agent-events.ts';
import { userKeyOf } from './identity.ts';
import { isTerminal, runStatus } from './run-status.ts';
import { toolPolicyWire } from './schemas.ts';
import { sessionIdOf } from './sessions.ts';

export function runWire(run: AgentRun) {
  const status = runStatus(run);
  return {
    run_id: run.id,
    session_id: sessionIdOf(run),
    status,
    mode: run.mode,
    user_key: run.userKey,
    auth_provider: run.authProvider,
    created_at: run.createdAt.toISOString(),
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: isTerminal(status) ? (run.lastTurn?.finishedAt?.toISOString() ?? null) : null,
    attempts: run.attempts,
    turn_count: run.turnIds.length,
    tool_policy: toolPolicyWire(run.toolPolicy),
    metadata: run.metadata,
    error: run.errorCode ? { code: run.errorCode, message: run.errorMessage ?? '' } : null,
  };
}

/** What a run's events add up to: the answer, the tool calls, the approvals it waits for. */
export function summarize(events: AgentEventV1[]) {
  const content = events.filter((e) => e.type === 'token').map((e) => e.content ?? '').join('');
  const toolCalls = events
    .filter((e) => e.type === 'tool_call')
    .map((e) => ({ event_id: e.event_id, tool_call_id: e.tool_call_id, tool_name: e.tool_name, tool_args: e.tool_args }));
  const asked = events.filter((e) => e.type === 'ask_user').map((e) => e.approval_request_id!);
  const resolved = new Set(events.filter((e) => e.type === 'approval_resolved').map((e) => e.approval_request_id));
  const errors = events.filter((e) => e.type === 'error').map((e) => ({ code: e.metadata.code, message: e.content }));
  return { content, toolCalls, pendingApprovalIds: asked.filter((id) => !resolved.has(id)), errors };
}

export function traceWire(run: AgentRun, events: AgentEventV1[]) {
  const summary = summarize(events);
  const wire = runWire(run);
  const end = wire.finished_at ? new Date(wire.finished_at).getTime() : null;
  return {
    ...wire,
    final_content: summary.content,
    event_count: events.length,
    tool_call_count: summary.toolCalls.length,
    error_event_count: summary.errors.length,
    duration_ms: end !== null ? end - run.createdAt.getTime() : null,
    approval_request_ids: events.filter((e) => e.type === 'ask_user').map((e) => e.approval_request_id),
  };
}

export function approvalWire(a: ApprovalRecord) {
  const timeoutS = Math.round((a.expiresAt.getTime() - a.createdAt.getTime()) / 1000);
  return {
    approval_request_id: a.id,
    id: a.id,
    status: a.status,
    approved: a.status === 'approved',
    expired: a.status === 'expired',
    timeout_seconds: timeoutS,
    created_at: a.createdAt.toISOString(),
    expires_at: a.expiresAt.toISOString(),
    resolved_at: a.resolvedAt?.toISOString() ?? null,
    // The decider's own words when they gave a reason; else what happened (approval_timeout, …).
    resolution_reason: a.status === 'pending' ? null : (a.decisionNote ?? a.reason),
    policy_scope: a.policyScope,
    policy_action: a.policyAction,
    policy_matched: a.policyMatched,
    requested_by: userKeyOf(a.requesterTenant, a.requesterUsername),
    resolved_by: a.resolverTenant && a.resolverUsername ? userKeyOf(a.resolverTenant, a.resolverUsername) : null,
    tool_name: a.tool,
    tool_args: a.args,
    content: a.prompt,
    run_id: a.runId,
    // The caller's own session string when the run was started with one (issue 24), as runs echo it.
    session_id: a.sessionRef ?? a.conversationId,
    // Issue 26 (M-of-N): how many approvers it needs, who approved so far (usernames of the
    // requester's tenant), and every decision with the way it came.
    approvals_required: a.terms.required,
    // Issue 37 item 4: who may approve (the rule's roles and usernames; both empty: the defaults),
    // and the requester's message that led to the call (at most 500 characters), for approvers
    // who may not open the requester's conversation.
    approvers: { roles: a.terms.roles, users: a.terms.users },
    request_message: a.requestMessage,
    approved_by: a.decisions.filter((d) => d.decision === 'approve').map((d) => d.user),
    decisions: a.decisions.map((d) => ({ user: d.user, decision: d.decision, decided_at: d.decidedAt.toISOString(), channel: d.channel })),
    // Issue 27: what the approver sees besides the arguments.
    preview: a.preview,
    labels: a.labels,
    replaces: a.replaces,
    // Issue 27 item 1: the arguments an approver's edit runs instead of tool_args; null: not edited.
    edited_args: a.finalArgs,
    // Approve with a grant: the longest it may be and its default match (null: not grantable), and the grant made.
    grantable: a.grantOffer,
    grant_id: a.grantId,
    // Issue 28: approving needs the approver's passkey (POST …/passkey-challenge, then approve with `passkey`).
    step_up: a.stepUp,
    action_hash: a.actionHash,
  };
}
