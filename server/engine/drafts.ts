/**
 * Builders for the ledger drafts a turn commits, from the agent's and the approvals' shapes to
 * the event vocabulary. Pure.
 * @module
 */
import type { AgentEvent } from '../agent/index.ts';
import type { OpenedApproval, ResolvedApproval } from '../approvals/steps.ts';
import type { EventDraft, RunStatus } from './events.ts';

type ToolResultEvent = Extract<AgentEvent, { type: 'tool_end' | 'tool_error' }>;

export function toolCallDraft(runId: string, e: Extract<AgentEvent, { type: 'tool_start' }>): EventDraft {
  return { kind: 'tool.call', payload: { run_id: runId, tool_call_id: e.toolCallId, tool: e.tool, input: e.input, ...(e.policy ? { policy: e.policy } : {}) } };
}

export function toolResultDraft(runId: string, e: ToolResultEvent): EventDraft {
  const base = { run_id: runId, tool_call_id: e.toolCallId, tool: e.tool };
  return e.type === 'tool_end'
    ? { kind: 'tool.result', payload: { ...base, status: 'done', output: e.output, duration_ms: Math.max(0, Math.round(e.durationMs)) } }
    : { kind: 'tool.result', payload: { ...base, status: 'error', error: e.error, ...(e.code ? { code: e.code } : {}) } };
}

export function approvalRequestedDraft(runId: string, a: OpenedApproval): EventDraft {
  return {
    kind: 'approval.requested',
    payload: {
      run_id: runId, approval_id: a.approvalId, tool_call_id: a.toolCallId, tool: a.tool, input: a.input, prompt: a.prompt,
      expires_at: a.expiresAt.toISOString(), timeout_s: a.timeoutS,
      ...(a.policy ? { policy: a.policy } : {}),
    },
  };
}

export function approvalResolvedDraft(runId: string, r: ResolvedApproval): EventDraft {
  return { kind: 'approval.resolved', payload: { run_id: runId, approval_id: r.approvalId, result: r.result, reason: r.reason } };
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
  error?: { code: string; detail: string };
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
    },
  };
}
