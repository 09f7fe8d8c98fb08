/**
 * The agent-events phase of a turn (turn.ts): answer tokens go out as live-only partials, tool
 * calls and results commit as they happen, and a pause commits its approvals with run.finished.
 *
 *   token            -> partial (never written per token)
 *   tool call/result -> [assistant.message] tool.call / tool.result
 *   pause            -> [assistant.message] approval.requested… run.finished(paused)
 * @module
 */
import type { AgentEvent } from '../agent/index.ts';
import { addTiming } from '../timing/index.ts';
import { openApprovals } from '../approvals/decide.ts';
import { answerDraft, approvalRequestedDraft, replacedApprovalDrafts, toolCallDraft, toolResultDraft } from './drafts.ts';
import type { LiveEvent } from './events.ts';
import type { ToolStartEvent, TurnScope } from './turn-scope.ts';

type ToolResultEvent = Extract<AgentEvent, { type: 'tool_end' | 'tool_error' }>;
type ApprovalEvent = Extract<AgentEvent, { type: 'approval_required' }>;

/** Relays the agent's events; returns true when the turn ended paused for approval. */
export async function* relayAgentEvents(t: TurnScope, events: AsyncIterable<AgentEvent>): AsyncGenerator<LiveEvent, boolean> {
  const runId = t.ctx.runId;
  for await (const event of events) {
    if (event.type === 'tool_end') addTiming('tools', event.durationMs);
    switch (event.type) {
      case 'token':
        t.inToolRound = false;
        t.transcript.token(event.token);
        yield { kind: 'partial', payload: { run_id: runId, token: event.token } };
        break;
      case 'tool_start':
        yield* onToolStart(t, event);
        break;
      case 'tool_end':
      case 'tool_error':
        yield* onToolResult(t, event);
        break;
      case 'done':
        // A retried thread that had already answered before the crash streams no token: its
        // stored answer is the turn's.
        if (t.ctx.input.retryOf && !t.transcript.answerText && event.text) {
          t.transcript.token(event.text);
          yield { kind: 'partial', payload: { run_id: runId, token: event.text } };
        }
        break;
      case 'approval_required':
        yield* onApprovalRequired(t, event);
        return true;
    }
  }
  return false;
}

async function* onToolStart(t: TurnScope, event: ToolStartEvent): AsyncGenerator<LiveEvent> {
  if (!t.inToolRound) t.turns++;
  t.inToolRound = true;
  // A call reported once it finished commits with its end, in one transaction: the call
  // has already run, so a separate tool.call would only put a commit before the answer.
  if (event.finished) {
    t.finishedStart = event;
    return;
  }
  yield* await t.commit(async (tx) => {
    const drafts = [...answerDraft(t.ctx.runId, t.transcript.answerText), toolCallDraft(t.ctx.runId, event)];
    await t.transcript.toolStart(event.tool, event.input, event.toolCallId, tx, undefined, event.grant);
    return drafts;
  });
}

async function* onToolResult(t: TurnScope, event: ToolResultEvent): AsyncGenerator<LiveEvent> {
  const runId = t.ctx.runId;
  const start = t.finishedStart?.toolCallId === event.toolCallId ? t.finishedStart : null;
  t.finishedStart = null;
  yield* await t.commit(async (tx) => {
    const result = event.type === 'tool_end' ? { output: event.output, durationMs: event.durationMs } : { error: event.error, code: event.code };
    if (!start) {
      await t.transcript.toolEnd(event.toolCallId, result, tx);
      return [toolResultDraft(runId, event)];
    }
    const drafts = [...answerDraft(runId, t.transcript.answerText), toolCallDraft(runId, start), toolResultDraft(runId, event)];
    await t.transcript.toolStart(start.tool, start.input, start.toolCallId, tx, result, start.grant);
    return drafts;
  });
}

async function* onApprovalRequired(t: TurnScope, event: ApprovalEvent): AsyncGenerator<LiveEvent> {
  const { deps, ctx } = t;
  if (!t.inToolRound) t.turns++;
  let opened: Awaited<ReturnType<typeof openApprovals>> = [];
  const committed = await t.commit(async (tx) => {
    const drafts = answerDraft(ctx.runId, t.transcript.answerText);
    opened = await openApprovals(tx, { conversationId: ctx.conversationId, userId: ctx.user.userId, pending: event.approvals, timeoutS: deps.approvalTimeoutS, now: deps.now, outbox: deps.approvalOutbox, traceParent: t.span.traceparent() });
    for (const approval of opened) {
      // Asked again after a state change (issue 27): the refused approval's card closes first.
      if (approval.replaces) await t.transcript.approvalResolved(approval.replaces.approvalId, 'denied', approval.replaces.reason, tx);
      await t.transcript.approvalRequested(approval, tx);
    }
    const paused = await t.settle(tx, { status: 'paused', stopReason: 'approval_required' }, opened[0]?.expiresAt);
    return [...drafts, ...replacedApprovalDrafts(ctx.runId, opened), ...opened.map((a) => approvalRequestedDraft(ctx.runId, a)), ...paused];
  });
  deps.onApprovalsOpened?.(opened.map((a) => ({ approvalId: a.approvalId, expiresAt: a.expiresAt })));
  yield* committed;
}
