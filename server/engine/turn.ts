/**
 * One turn of a conversation, transport-free: resolve what is pending, take the user's message,
 * run (or resume) the agent, and yield numbered events as they commit, with answer tokens as
 * live-only partials in between. The last event is always run.finished.
 *
 *   approvals decided?  -> approval.resolved…      (same transaction as the atomic transition)   decidePending
 *   a confirm leaving others pending -> run.finished(paused)                                        startAgent
 *   new message?        -> user.message            (same transaction as the history row)          takeMessage
 *   owed resume (approvals/decide.ts) -> the confirmed action runs first, then the message
 *   retry (TurnInput.retryOf) -> no message: the thread goes on from its checkpoint
 *   agent tokens        -> partial… (never written per token)                                    turn-relay.ts
 *   tool call / result  -> [assistant.message] tool.call / tool.result
 *   pause               -> [assistant.message] approval.requested… run.finished(paused)
 *   end / error / stop  -> [assistant.message] run.finished(done | failed | cancelled)            turn-end.ts
 *
 * What the phases share (transcript, counters, commit, settle) is a TurnScope (turn-scope.ts).
 * @module
 */
import type { AgentEvent } from '../agent/index.ts';
import { markTurnStart } from '../timing/index.ts';
import { recordApprovalWait } from '../telemetry/spans.ts';
import type { ApprovalEdit } from '../approvals/edit.ts';
import { decidedAfter, decideApprovals, owedResume, type ApprovalProgress, type OwedResume, type ResolvedApproval } from '../approvals/decide.ts';
import { attachFiles, FILES_ONLY } from './attachments.ts';
import { findApproval, listUnresumedApprovals, markResumed } from '../db/approvals.ts';
import { isUuid } from '../db/conversations.ts';
import type { Queryable } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { approvalProgressDraft, approvalResolvedDraft, resolvedCardPatch } from './drafts.ts';
import { userMessageExtras } from './input-seqs.ts';
import type { LiveEvent } from './events.ts';
import { concatUnlessPaused, resumeOwed, startEarly, stillPending, type ResumeContext } from './resume.ts';
import { finishDone, finishFailed } from './turn-end.ts';
import { relayAgentEvents } from './turn-relay.ts';
import { alignBranch, forkTurn } from './turn-branch.ts';
import { isDecision } from '../approvals/types.ts';
import { openScope, type TurnContext, type TurnDeps, type TurnScope } from './turn-scope.ts';
import type { TurnInput } from './types.ts';

export type { TurnContext, TurnDeps } from './turn-scope.ts';

export async function* runTurn(deps: TurnDeps, ctx: TurnContext): AsyncGenerator<LiveEvent> {
  markTurnStart(); // Server-Timing's queue: the request's time before its turn began
  const t = openScope(deps, ctx);
  try {
    if (!ctx.fresh) await alignBranch(t);
    const decided = yield* decidePending(t);
    const events = yield* startAgent(t, decided);
    if (!events) return;
    if (yield* relayAgentEvents(t, events)) return;
    yield* finishDone(t);
  } catch (error) {
    yield* finishFailed(t, error);
  } finally {
    if (!t.settled) await ctx.lease.release().catch(() => {});
    t.span.end();
  }
}

interface Decided {
  resolved: ResolvedApproval[];
  /** Approvals this turn counted one approver of, still pending for more (M-of-N). */
  progress: ApprovalProgress[];
  /** What the thread is owed (confirmed or denied calls to resume), if anything. */
  owed: OwedResume | null;
}

/** Approvals decided by this turn (approval.resolved, in the decision's transaction), and what is owed after them. */
async function* decidePending(t: TurnScope): AsyncGenerator<LiveEvent, Decided> {
  const { deps, ctx } = t;
  const { runId, conversationId, input } = ctx;
  let resolved: ResolvedApproval[] = [];
  let progress: ApprovalProgress[] = [];
  // One lookup for what is pending and what is owed; most turns find neither and skip the
  // transaction (time to first token). A new conversation skips even the lookup.
  const unresumed = ctx.fresh ? [] : await (ctx.unresumed ?? listUnresumedApprovals(deps.pool, conversationId));
  const pendingApprovals = unresumed.filter((a) => a.status === 'pending');
  const pending = pendingApprovals.length > 0;
  // What the checkpoint has paused is read alongside the decision's transaction, not after it:
  // under the lease nothing moves the thread meanwhile (one checkpoint read off the confirm path).
  const paused = unresumed.length > 0 ? readAhead(deps.agent.pendingApprovals(conversationId)) : undefined;
  if (pending) {
    const decided = await t.commit(async (tx) => {
      const turn = { conversationId, userId: ctx.user.userId, action: isDecision(input.action) ? input.action : null, approvalId: input.approvalId, now: deps.now, decidedBy: input.decidedBy, note: input.decisionNote, grant: input.grant, origin: input.origin, outbox: deps.approvalOutbox, edit: editFor(t, input.editedArgs) };
      ({ resolved, progress } = await decideApprovals(tx, turn, pendingApprovals));
      for (const p of progress) await t.transcript.approvalProgress(p, tx);
      for (const r of resolved) await t.transcript.approvalResolved(r.approvalId, r.result, r.reason, tx, resolvedCardPatch(r));
      return [...progress.map((p) => approvalProgressDraft(runId, p)), ...resolved.map((r) => approvalResolvedDraft(runId, r))];
    });
    deps.onApprovalsResolved?.(resolved);
    recordApprovalWaits(t, resolved);
    yield* decided;
  }
  // After a decision what is owed is known from the rows it left, unless some stayed pending.
  const owed = ctx.fresh ? null : await owedResume(deps.pool, deps.agent, conversationId, deps.now, { decided: pending ? (decidedAfter(unresumed, resolved) ?? undefined) : unresumed, paused });
  return { resolved, progress, owed };
}

/** The agent's event stream for this turn: a decision's resume, a retry's continuation, or a new message. Null: the turn ended paused. */
async function* startAgent(t: TurnScope, { resolved, progress, owed }: Decided): AsyncGenerator<LiveEvent, AsyncIterable<AgentEvent> | null> {
  const { deps, ctx } = t;
  const runContext: ResumeContext = {
    threadId: ctx.conversationId, userToken: ctx.setup?.userToken ?? ctx.user.token, conversationId: ctx.conversationId, signal: ctx.signal,
    toolPolicy: ctx.setup?.toolPolicy, callerSystem: ctx.setup?.callerSystem, trace: t.span, fromCheckpoint: t.startFrom,
  };
  if (isDecision(ctx.input.action)) {
    if (!owed && resolved.length === 0 && progress.length === 0) throw await noApprovalToDecide(deps.pool, ctx.conversationId, ctx.input.approvalId);
    if (!owed) {
      // Other approvals of the batch still wait for their own decision, or this one for more
      // approvers (M-of-N): the run stays paused.
      const waiting = await stillPending(deps.pool, ctx.conversationId);
      yield* await t.commit((tx) => t.settle(tx, { status: 'paused', stopReason: 'approval_required' }, waiting ?? undefined));
      return null;
    }
    return resumeOwed(deps, owed, runContext);
  }
  // A retry after its process died (issue 30): no new message; the thread goes on from its
  // last stored step, so a tool that ran before the crash is not asked for again.
  if (ctx.input.retryOf) return deps.agent.continueThread(runContext);
  if (ctx.input.action) {
    // A fork leaves the shown branch: what it superseded is settled there first; a confirmed
    // action still owed runs where it was confirmed, never on the fork.
    if (owed?.runsSomething) throw new AirlockError('CONFLICT', 'A confirmed action is still to be carried out here; branch once it has run.');
    if (owed) await markResumed(deps.pool, owed.approvalIds, deps.now());
    return yield* forkTurn(t, runContext);
  }
  return yield* takeMessage(t, owed, runContext);
}

/** A new message: user.message commits (with its history row) while the model call starts. */
async function* takeMessage(t: TurnScope, owed: OwedResume | null, runContext: ResumeContext): AsyncGenerator<LiveEvent, AsyncIterable<AgentEvent>> {
  const { deps, ctx } = t;
  const input = ctx.input;
  // Before the model call and once per turn: extraction never sits on the token path.
  const { parts, files } = await attachFiles(deps.prepareAttachments, input.files, input.storedPaths);
  const run = () => deps.agent.run({ ...runContext, text: input.text || FILES_ONLY, attachments: parts, newThread: ctx.fresh });
  // A confirmed action is done before the new message, never dropped; otherwise the agent
  // answers the superseded tool calls itself before it takes the new message.
  let agentEvents: AsyncIterable<AgentEvent>;
  if (owed?.runsSomething) agentEvents = concatUnlessPaused(resumeOwed(deps, owed, runContext), run);
  else {
    if (owed) await markResumed(deps.pool, owed.approvalIds, deps.now());
    agentEvents = run();
  }
  // The model call starts before the user message commits and overlaps it (time to first
  // token); its events are read only after user.message. A confirmed action owed first never
  // starts before the message is stored.
  const started = owed?.runsSomething ? null : startEarly(agentEvents);
  try {
    yield* await t.commit(async (tx) => {
      await t.transcript.user(input.text, files, tx);
      return [{ kind: 'user.message', payload: { run_id: ctx.runId, request_id: input.requestId, text: input.text, files, ...userMessageExtras(input) } }];
    });
  } catch (error) {
    void started?.stop(); // not awaited: the model may take its time to answer first
    throw error;
  }
  return started ?? agentEvents;
}

/**
 * The `airlock.approval.wait` span of each approval this turn ended, once its decision committed:
 * it starts at the request and is the child of the turn that paused (its row keeps that turn's
 * traceparent), linked to this turn. A wait that outlived its process still joins its trace.
 */
function recordApprovalWaits(t: TurnScope, resolved: ResolvedApproval[]): void {
  for (const { approval, reason } of resolved) {
    recordApprovalWait({
      approvalId: approval.id, tool: approval.tool, toolCallId: approval.toolCallId, conversationId: approval.conversationId,
      requestedAt: approval.createdAt, decidedAt: approval.resolvedAt ?? t.deps.now(), outcome: approval.status, reason, parent: approval.traceParent, decidedIn: t.span,
    });
  }
}

/** A confirm's edited arguments with their check, run as the requester the turn runs as (approvals/edit.ts). */
function editFor(t: TurnScope, args: TurnInput['editedArgs']): ApprovalEdit | null {
  if (!args) return null;
  const userToken = t.ctx.setup?.userToken ?? t.ctx.user.token;
  return { args, review: (tool, edited) => t.deps.agent.reviewEdit({ tool, args: edited, userToken }), defaultTimeoutS: t.deps.approvalTimeoutS };
}

/** A read started before its result is needed: its failure surfaces where it is awaited, never as unhandled. */
export function readAhead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

/** The user's words when a message is only files (the model needs a non-empty first part). */
/**
 * Why a confirm or deny found nothing to decide: the approval it names (or the latest) expired —
 * the expiry timer got there first — or there is none pending.
 */
async function noApprovalToDecide(db: Queryable, conversationId: string, approvalId: string | null | undefined): Promise<AirlockError> {
  if (approvalId && !isUuid(approvalId)) return new AirlockError('APPROVAL_NOT_FOUND');
  const approval = await findApproval(db, conversationId, approvalId);
  return approval?.status === 'expired' ? new AirlockError('APPROVAL_EXPIRED') : new AirlockError('APPROVAL_NOT_FOUND');
}
