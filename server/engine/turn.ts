/**
 * One turn of a conversation, transport-free: resolve what is pending, take the user's message,
 * run (or resume) the agent, and yield numbered events as they commit, with answer tokens as
 * live-only partials in between. The last event is always run.finished.
 *
 *   approvals decided?  -> approval.resolved…      (same transaction as the atomic transition)
 *   a confirm leaving others pending -> run.finished(paused)
 *   new message?        -> user.message            (same transaction as the history row)
 *   owed resume (approvals/steps.ts) -> the confirmed action runs first, then the message
 *   agent tokens        -> partial… (never written per token)
 *   tool call / result  -> [assistant.message] tool.call / tool.result
 *   pause               -> [assistant.message] approval.requested… run.finished(paused)
 *   end / error / stop  -> [assistant.message] run.finished(done | failed | cancelled)
 * @module
 */
import type { AgentEvent, AgentRuntime } from '../agent/index.ts';
import { decidedAfter, decideApprovals, openApprovals, owedResume, type ResolvedApproval } from '../approvals/steps.ts';
import { withReports, type PrepareChatAttachments } from './attachments.ts';
import type { ConversationLease } from './lease.ts';
import { findApproval, listUnresumedApprovals, markResumed, type Approval } from '../db/approvals.ts';
import { isUuid } from '../db/conversations.ts';
import { isDatabaseUnavailable, withTransaction, type Pool, type Queryable } from '../db/index.ts';
import { finishRun } from '../db/runs.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { answerDraft, approvalRequestedDraft, approvalResolvedDraft, runFinishedDraft, toolCallDraft, toolResultDraft, type RunSummary } from './drafts.ts';
import type { EventDraft, LedgerEvent, LiveEvent } from './events.ts';
import type { Ledger } from './ledger.ts';
import { concatUnlessPaused, resumeOwed, startEarly, stillPending } from './resume.ts';
import { RunAbort, toTurnError } from './run-errors.ts';
import { Transcript } from './transcript.ts';
import type { TurnInput, TurnSetup, TurnUser } from './types.ts';

export interface TurnDeps {
  pool: Pool;
  ledger: Ledger;
  agent: AgentRuntime;
  approvalTimeoutS: number;
  now: () => Date;
  log: { error(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /** Reads and frames a message's files for the model (engine/attachments.ts); default: none are read. */
  prepareAttachments?: PrepareChatAttachments;
  /** Told after a decision committed, with the rows it left (the engine's approval-wait metric). */
  onApprovalsResolved?: (resolved: ResolvedApproval[]) => void;
  /** Told after a pause committed its approvals (the headless API schedules their expiry). */
  onApprovalsOpened?: (approvals: Array<{ approvalId: string; expiresAt: Date }>) => void;
  /** Retries a run's last commit once the database is back (engine/pending-writes.ts fits); `flush` tries now. */
  pendingWrites?: { defer(label: string, write: () => Promise<void>): void; flush?(): Promise<void> };
}


export interface TurnContext {
  runId: string;
  conversationId: string;
  user: TurnUser;
  /** With the stored path of each file, as FileStorage resolved it for this user. */
  input: TurnInput & { requestId: string; storedPaths: string[] };
  /** The run's cancel signal (Stop or shutdown; never a disconnect). */
  signal: AbortSignal;
  lease: ConversationLease;
  /** The conversation was created by this submit: nothing can be pending or owed in it yet. */
  fresh?: boolean;
  /** The run's tool policy and the caller's system text (EngineOptions.prepareTurn). */
  setup?: TurnSetup;
  /** The conversation's approvals not yet resumed, when the engine started reading them under the lease. */
  unresumed?: Promise<Approval[]>;
}


export async function* runTurn(deps: TurnDeps, ctx: TurnContext): AsyncGenerator<LiveEvent> {
  const { runId, conversationId, input } = ctx;
  const transcript = new Transcript(deps.pool, conversationId);
  const startedAt = Date.now();
  let turns = 0;
  let inToolRound = false;
  let settled = false;
  let finishedStart: Extract<AgentEvent, { type: 'tool_start' }> | null = null;
  const commit = (drafts: (tx: Queryable) => Promise<EventDraft[]>): Promise<LedgerEvent[]> =>
    transcript.atomically(() => withTransaction(deps.pool, async (tx) => deps.ledger.append(conversationId, await drafts(tx), { tx })));
  /**
   * Settles the run row and the conversation lease (released, or handed to the approval) in the
   * transaction of run.finished: whoever sees the end may send the next message at once.
   */
  const settle = async (tx: Queryable, summary: Omit<RunSummary, 'startedAt' | 'turns'>, approvalExpiresAt?: Date): Promise<EventDraft[]> => {
    if (!(await finishRun(tx, { id: runId, status: summary.status }))) throw new AirlockError('CONFLICT', 'The run was settled elsewhere.');
    if (approvalExpiresAt) await ctx.lease.handOverToApproval(approvalExpiresAt, tx);
    else await ctx.lease.release(tx);
    settled = true;
    return [runFinishedDraft(runId, { ...summary, startedAt, turns })];
  };

  try {
    let resolved: ResolvedApproval[] = [];
    // One lookup for what is pending and what is owed; most turns find neither and skip the
    // transaction (time to first token). A new conversation skips even the lookup.
    const unresumed = ctx.fresh ? [] : await (ctx.unresumed ?? listUnresumedApprovals(deps.pool, conversationId));
    const pendingApprovals = unresumed.filter((a) => a.status === 'pending');
    const pending = pendingApprovals.length > 0;
    // What the checkpoint has paused is read alongside the decision's transaction, not after it:
    // under the lease nothing moves the thread meanwhile (one checkpoint read off the confirm path).
    const paused = unresumed.length > 0 ? readAhead(deps.agent.pendingApprovals(conversationId)) : undefined;
    if (pending) {
      const decided = await commit(async (tx) => {
        const turn = { conversationId, userId: ctx.user.userId, action: input.action, approvalId: input.approvalId, now: deps.now, decidedBy: input.decidedBy, note: input.decisionNote, origin: input.origin };
        resolved = await decideApprovals(tx, turn, pendingApprovals);
        for (const r of resolved) await transcript.approvalResolved(r.approvalId, r.result, r.reason, tx);
        return resolved.map((r) => approvalResolvedDraft(runId, r));
      });
      deps.onApprovalsResolved?.(resolved);
      yield* decided;
    }
    // After a decision what is owed is known from the rows it left, unless some stayed pending.
    const owed = ctx.fresh ? null : await owedResume(deps.pool, deps.agent, conversationId, deps.now, { decided: pending ? (decidedAfter(unresumed, resolved) ?? undefined) : unresumed, paused });

    const runContext = { threadId: conversationId, userToken: ctx.setup?.userToken ?? ctx.user.token, conversationId, signal: ctx.signal, toolPolicy: ctx.setup?.toolPolicy, callerSystem: ctx.setup?.callerSystem };
    let events: AsyncIterable<AgentEvent>;
    if (input.action) {
      if (!owed && resolved.length === 0) throw await noApprovalToDecide(deps.pool, conversationId, input.approvalId);
      if (!owed) {
        // Other approvals of the batch still wait for their own decision: the run stays paused.
        const waiting = await stillPending(deps.pool, conversationId);
        yield* await commit((tx) => settle(tx, { status: 'paused', stopReason: 'approval_required' }, waiting ?? undefined));
        return;
      }
      events = resumeOwed(deps, owed, runContext);
    } else {
      // Before the model call and once per turn: extraction never sits on the token path.
      const attached = await (deps.prepareAttachments ?? noAttachments)(input.files, input.storedPaths);
      const files = withReports(input.files, attached.reports);
      const run = () => deps.agent.run({ ...runContext, text: input.text || FILES_ONLY, attachments: attached.parts, newThread: ctx.fresh });
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
        yield* await commit(async (tx) => {
          await transcript.user(input.text, files, tx);
          const clientId = input.clientMessageId ? { client_message_id: input.clientMessageId } : {};
          return [{ kind: 'user.message', payload: { run_id: runId, request_id: input.requestId, text: input.text, files, ...clientId } }];
        });
      } catch (error) {
        void started?.stop(); // not awaited: the model may take its time to answer first
        throw error;
      }
      events = started ?? agentEvents;
    }

    for await (const event of events) {
      switch (event.type) {
        case 'token':
          inToolRound = false;
          transcript.token(event.token);
          yield { kind: 'partial', payload: { run_id: runId, token: event.token } };
          break;
        case 'tool_start':
          if (!inToolRound) turns++;
          inToolRound = true;
          // A call reported once it finished commits with its end, in one transaction: the call
          // has already run, so a separate tool.call would only put a commit before the answer.
          if (event.finished) {
            finishedStart = event;
            break;
          }
          yield* await commit(async (tx) => {
            const drafts = [...answerDraft(runId, transcript.answerText), toolCallDraft(runId, event)];
            await transcript.toolStart(event.tool, event.input, event.toolCallId, tx);
            return drafts;
          });
          break;
        case 'tool_end':
        case 'tool_error': {
          const start = finishedStart?.toolCallId === event.toolCallId ? finishedStart : null;
          finishedStart = null;
          yield* await commit(async (tx) => {
            const result = event.type === 'tool_end' ? { output: event.output, durationMs: event.durationMs } : { error: event.error, code: event.code };
            if (!start) {
              await transcript.toolEnd(event.toolCallId, result, tx);
              return [toolResultDraft(runId, event)];
            }
            const drafts = [...answerDraft(runId, transcript.answerText), toolCallDraft(runId, start), toolResultDraft(runId, event)];
            await transcript.toolStart(start.tool, start.input, start.toolCallId, tx, result);
            return drafts;
          });
          break;
        }
        case 'approval_required': {
          if (!inToolRound) turns++;
          let opened: Awaited<ReturnType<typeof openApprovals>> = [];
          const committed = await commit(async (tx) => {
            const drafts = answerDraft(runId, transcript.answerText);
            opened = await openApprovals(tx, { conversationId, userId: ctx.user.userId, pending: event.approvals, timeoutS: deps.approvalTimeoutS, now: deps.now });
            for (const approval of opened) await transcript.approvalRequested(approval, tx);
            const paused = await settle(tx, { status: 'paused', stopReason: 'approval_required' }, opened[0]?.expiresAt);
            return [...drafts, ...opened.map((a) => approvalRequestedDraft(runId, a)), ...paused];
          });
          deps.onApprovalsOpened?.(opened.map((a) => ({ approvalId: a.approvalId, expiresAt: a.expiresAt })));
          yield* committed;
          return;
        }
      }
    }
    turns++;
    yield* await commit(async (tx) => {
      const drafts = answerDraft(runId, transcript.answerText);
      await transcript.endAnswer({}, tx);
      return [...drafts, ...(await settle(tx, { status: 'done', stopReason: 'end_turn' }))];
    });
  } catch (error) {
    const saved = await transcript.saveAnswer();
    let ending: LedgerEvent[];
    try {
      ending = await finishAfterError(error);
    } catch (finishError) {
      // The database is away: the answer so far and the run's end are written when it is back.
      if (isDatabaseUnavailable(finishError) && deps.pendingWrites) {
        deps.pendingWrites.defer(`end of run ${runId}`, async () => {
          transcript.restoreAnswer(saved);
          await finishAfterError(error);
        });
      } else deps.log.error({ err: finishError, runId }, 'could not record the end of a run');
      throw isDatabaseUnavailable(finishError) ? finishError : error;
    }
    yield* ending;
  } finally {
    if (!settled) await ctx.lease.release().catch(() => {});
  }

  async function finishAfterError(error: unknown): Promise<LedgerEvent[]> {
    const text = transcript.answerText;
    // An abort for a taxonomy error (engine.abandon) is a failure, not a Stop.
    const abortedFor = ctx.signal.aborted && isAirlockError(ctx.signal.reason) ? ctx.signal.reason : undefined;
    if (ctx.signal.aborted && !abortedFor) {
      const reason = ctx.signal.reason instanceof RunAbort ? ctx.signal.reason.reason : 'cancelled';
      return commit(async (tx) => {
        await transcript.endAnswer({ cancelled: true }, tx);
        return [...answerDraft(runId, text, { cancelled: true }), ...(await settle(tx, { status: 'cancelled', stopReason: reason }))];
      });
    }
    const failure = toTurnError(abortedFor ?? error, runId);
    if (failure.code === 'INTERNAL') deps.log.error({ err: error, runId }, 'turn failed');
    const mark = { code: failure.code, detail: failure.message };
    return commit(async (tx) => {
      await transcript.endAnswer({ error: mark }, tx);
      return [...answerDraft(runId, text, { error: mark }), ...(await settle(tx, { status: 'failed', stopReason: 'error', error: mark }))];
    });
  }
}

/** A read started before its result is needed: its failure surfaces where it is awaited, never as unhandled. */
export function readAhead<T>(read: Promise<T>): Promise<T> {
  read.catch(() => {});
  return read;
}

/** The user's words when a message is only files (the model needs a non-empty first part). */
const FILES_ONLY = '(No message text: see the attached files.)';

const noAttachments: PrepareChatAttachments = async () => ({ parts: [], reports: [] });

/**
 * Why a confirm or deny found nothing to decide: the approval it names (or the latest) expired —
 * the expiry timer got there first — or there is none pending.
 */
async function noApprovalToDecide(db: Queryable, conversationId: string, approvalId: string | null | undefined): Promise<AirlockError> {
  if (approvalId && !isUuid(approvalId)) return new AirlockError('APPROVAL_NOT_FOUND');
  const approval = await findApproval(db, conversationId, approvalId);
  return approval?.status === 'expired' ? new AirlockError('APPROVAL_EXPIRED') : new AirlockError('APPROVAL_NOT_FOUND');
}
