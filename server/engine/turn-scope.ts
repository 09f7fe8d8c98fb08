/**
 * What the phases of one turn (turn.ts) share: the turn's inputs, its transcript and counters, and
 * the two writes every phase commits through — an atomic ledger commit, and the settle that ends
 * the run row and the conversation lease in run.finished's transaction.
 * @module
 */
import type { AgentEvent, AgentRuntime } from '../agent/index.ts';
import type { ResolvedApproval } from '../approvals/decide.ts';
import type { PrepareChatAttachments } from './attachments.ts';
import type { ConversationLease } from './lease.ts';
import type { Approval } from '../db/approvals.ts';
import type { BranchAt, BranchState } from '../db/branches.ts';
import { isDecision } from '../approvals/types.ts';
import { withTransaction, type Pool, type Queryable } from '../db/index.ts';
import { finishRun } from '../db/runs.ts';
import { AirlockError } from '../errors.ts';
import { invokeAgentSpan, ledgerCommitSpan } from '../telemetry/spans.ts';
import type { Span } from '../telemetry/index.ts';
import { runFinishedDraft, type RunSummary } from './drafts.ts';
import type { EventDraft, LedgerEvent } from './events.ts';
import type { ModelTitles } from './first-title.ts';
import type { Ledger } from './ledger.ts';
import { InputSeqs } from './input-seqs.ts';
import { Transcript } from './transcript.ts';
import type { FileStorage, TurnInput, TurnSetup, TurnUser } from './types.ts';

export interface TurnDeps {
  pool: Pool;
  ledger: Ledger;
  agent: AgentRuntime;
  approvalTimeoutS: number;
  /** Write approval notifications to the outbox (APPROVAL_WEBHOOKS; issue 26). */
  approvalOutbox?: boolean;
  now: () => Date;
  log: { error(obj: object, msg?: string): void; warn(obj: object, msg?: string): void };
  /** Reads and frames a message's files for the model (engine/attachments.ts); default: none are read. */
  prepareAttachments?: PrepareChatAttachments;
  /** Where a user's uploads are stored: a regenerate gives the model its message's files again (issue 29). */
  files?: FileStorage;
  /** Told after a decision committed, with the rows it left (the engine's approval-wait metric). */
  onApprovalsResolved?: (resolved: ResolvedApproval[]) => void;
  /** Told after a pause committed its approvals (the headless API schedules their expiry). */
  onApprovalsOpened?: (approvals: Array<{ approvalId: string; expiresAt: Date }>) => void;
  /** Retries a run's last commit once the database is back (engine/pending-writes.ts fits); `flush` tries now. */
  pendingWrites?: { defer(label: string, write: () => Promise<void>): void; flush?(): Promise<void> };
  /** A real model's titles (first-title.ts), asked after a first answer's end committed; absent: the rule's title stays. */
  titles?: Pick<ModelTitles, 'ask'>;
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
  /** Its active and thread branch, read with the lease (absent: alignBranch reads them). */
  branchAt?: BranchAt;
}

export type ToolStartEvent = Extract<AgentEvent, { type: 'tool_start' }>;

export interface TurnScope {
  deps: TurnDeps;
  ctx: TurnContext;
  transcript: Transcript;
  startedAt: number;
  /** Model turns so far (tool rounds plus the final answer). */
  turns: number;
  inToolRound: boolean;
  /** run.finished committed: the lease went with it. */
  settled: boolean;
  /** The branch the turn writes on (issue 29): its rows and its events (`branch`, when not 0). */
  branch: number;
  /** The conversation's branches as the turn found them (turn-branch.ts alignBranch); null: not read (a new conversation). */
  branches: BranchState | null;
  setBranch(branch: number): void;
  /** The checkpoint the turn's run goes on from: the active branch's, when a switch left the thread on another. */
  startFrom: string | null;
  /** The user.message seq the answer is for, when the turn has none of its own (a regenerate). */
  answering(seq: number): void;
  /** A call reported once it finished: committed with its end. */
  finishedStart: ToolStartEvent | null;
  /** The turn's `invoke_agent` span (server/telemetry; a no-op when off): the parent of its model, tool and commit spans. */
  span: Span;
  /** Appends the drafts built in one transaction (with the transcript's writes), in order. */
  commit(drafts: (tx: Queryable) => Promise<EventDraft[]>): Promise<LedgerEvent[]>;
  /**
   * Settles the run row and the conversation lease (released, or handed to the approval) in the
   * transaction of run.finished: whoever sees the end may send the next message at once.
   */
  settle(tx: Queryable, summary: Omit<RunSummary, 'startedAt' | 'turns'>, approvalExpiresAt?: Date): Promise<EventDraft[]>;
}

/** Every event of a turn on a branch carries it; branch 0 is left implicit (events before issue 29 have none). */
function stampBranch(drafts: EventDraft[], branch: number): EventDraft[] {
  return branch === 0 ? drafts : drafts.map((d) => ({ ...d, payload: { ...d.payload, branch } }) as EventDraft);
}

export function openScope(deps: TurnDeps, ctx: TurnContext): TurnScope {
  const { runId, conversationId } = ctx;
  const transcript = new Transcript(deps.pool, conversationId);
  const inputs = new InputSeqs(conversationId);
  const span = invokeAgentSpan({ conversationId, runId, kind: isDecision(ctx.input.action) ? 'decision' : ctx.input.action ? 'fork' : ctx.input.retryOf ? 'retry' : 'message' });
  const scope: TurnScope = {
    deps, ctx, transcript, startedAt: Date.now(), turns: 0, inToolRound: false, settled: false, finishedStart: null, span, branch: 0, branches: null, startFrom: null,
    setBranch(branch) {
      scope.branch = branch;
      transcript.branch = branch;
    },
    answering: (seq) => inputs.answering(seq),
    async commit(drafts) {
      const commitSpan = ledgerCommitSpan(span, runId);
      try {
        const events = await transcript.atomically(() =>
          withTransaction(deps.pool, async (tx) => {
            const built = await drafts(tx); // may move the turn to a new branch (a fork): stamped after
            return inputs.track(await deps.ledger.append(conversationId, stampBranch(await inputs.stamp(tx, built), scope.branch), { tx }));
          }));
        commitSpan.set({ 'airlock.ledger.events': events.length, 'airlock.ledger.kinds': events.map((e) => e.kind) });
        return events;
      } catch (error) {
        commitSpan.fail(errorType(error), (error as Error)?.message);
        throw error;
      } finally {
        commitSpan.end();
      }
    },
    async settle(tx, summary, approvalExpiresAt) {
      if (!(await finishRun(tx, { id: runId, status: summary.status }))) throw new AirlockError('CONFLICT', 'The run was settled elsewhere.');
      if (approvalExpiresAt) await ctx.lease.handOverToApproval(approvalExpiresAt, tx);
      else await ctx.lease.release(tx);
      scope.settled = true;
      span.set({ 'airlock.run.status': summary.status, 'airlock.run.stop_reason': summary.stopReason });
      return [runFinishedDraft(runId, { ...summary, startedAt: scope.startedAt, turns: scope.turns, retryOf: ctx.input.retryOf })];
    },
  };
  return scope;
}

/** A failure's `error.type`: its taxonomy code, else the error's name. */
export function errorType(error: unknown): string {
  if (error instanceof AirlockError) return error.code;
  return error instanceof Error ? error.name : 'Error';
}
