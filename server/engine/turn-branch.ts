/**
 * Branches in a turn (issue 29 item 2). The conversation is one LangGraph thread; a branch is a
 * line of its checkpoints, and the app only records which rows belong to which branch
 * (db/branches.ts). A run goes on from the thread's newest checkpoint unless it names another
 * (`checkpoint_id`: LangGraph's own fork), so:
 *
 *   any turn            -> the thread stands on another branch than the active one (a switch)?
 *                          record where it stood, run from the active branch's head        alignBranch
 *   edit / regenerate   -> the message's place on the shown branch -> the checkpoint before its
 *                          human message (getStateHistory) -> branch.forked (+ the edited
 *                          user.message) -> the run from that checkpoint                   forkTurn
 *
 * Why nothing runs twice: the fork starts from a checkpoint, never from a pending step. Before an
 * action that ran, the model has to ask again, and its call is a new tool call with its own
 * approval (a new card; a live grant may apply); the earlier approval, its receipt and audit stay
 * with the rows of the branch where it ran. After it, its call and result are in the fork's state,
 * and the model is told that nothing of it ran again.
 * @module
 */
import type { AgentEvent } from '../agent/index.ts';
import { insertBranch, messagePath, readBranches, setBranchHead, setThreadBranch, forksOf, type BranchState } from '../db/branches.ts';
import { withTransaction, type Queryable } from '../db/index.ts';
import { listPathMessages, type Message } from '../db/messages.ts';
import { AirlockError } from '../errors.ts';
import { branchPath, forkPoint, onPath } from '../../src/lib/wire/branches.ts';
import { attachFiles, FILES_ONLY, storedFiles } from './attachments.ts';
import type { EventDraft, LiveEvent } from './events.ts';
import type { ResumeContext } from './resume.ts';
import type { TurnScope } from './turn-scope.ts';

/** What the model is told on a fork (a system note before the agent's own): nothing ran again. */
export const BRANCH_NOTE =
  'This conversation was branched: the user edited or regenerated an earlier message. Tool calls and results shown earlier in it ran once, before the branch; nothing was run again. Anything to do now needs a new tool call.';

/**
 * The turn runs on the active branch: moves the thread there when a switch left it elsewhere.
 * A conversation that never forked reads nothing more (ctx.branchAt came with the lease).
 *
 * The move is recorded (thread_branch) before the run writes its first checkpoint, so a process
 * that dies in between leaves the thread's newest checkpoint where the move found it: on the head
 * recorded for the branch it left. The next turn sees that and starts from the active branch's
 * head again, so no turn ever continues another branch's thread.
 */
export async function alignBranch(t: TurnScope): Promise<void> {
  const { deps, ctx } = t;
  const at = ctx.branchAt;
  if (at && !at.forked) {
    t.setBranch(at.active);
    return;
  }
  const state = await readBranches(deps.pool, ctx.conversationId);
  t.branches = state;
  t.setBranch(state?.active ?? 0);
  if (!state || state.branches.length === 0) return;
  const newest = await deps.agent.threadHead(ctx.conversationId);
  const active = state.branches.find((b) => b.branch === state.active);
  if (state.active === state.thread) {
    const stranded = newest !== null && newest !== active?.headCheckpoint && state.branches.some((b) => b.branch !== state.active && b.headCheckpoint === newest);
    if (stranded) t.startFrom = active?.headCheckpoint ?? null;
    return;
  }
  await withTransaction(deps.pool, async (tx) => {
    await setBranchHead(tx, ctx.conversationId, state.thread, newest);
    await setThreadBranch(tx, ctx.conversationId, state.active);
  });
  // This turn's run goes on from where the branch was left (LangGraph's fork by checkpoint id).
  t.startFrom = active?.headCheckpoint ?? null;
  t.branches = { ...state, thread: state.active };
}

/** Where a fork starts: the message's user message, its number among them, and its place in history and ledger. */
interface ForkPlace {
  user: Message;
  humanIndex: number;
  parent: number;
  fromMessageSeq: number;
  fromSeq: number;
}

/** Edit or Regenerate: forks the thread and the conversation, and returns the run of the new branch. */
export async function* forkTurn(t: TurnScope, runContext: ResumeContext): AsyncGenerator<LiveEvent, AsyncIterable<AgentEvent>> {
  const { deps, ctx } = t;
  const { input, conversationId } = ctx;
  const edit = input.action === 'edit';
  t.branches ??= await readBranches(deps.pool, conversationId);
  const place = await forkPlace(deps.pool, conversationId, t.branches, input.messageId ?? null, edit);
  // Where the shown branch stands: after a switch the thread's newest checkpoint is still the
  // other branch's (alignBranch set where this turn starts instead).
  const left = t.startFrom ?? (await deps.agent.threadHead(conversationId));
  const fork = await deps.agent.forkThread(conversationId, place.humanIndex, left);
  // The message's files go to the model again: an edit's own, a regenerate's as first sent.
  const sent = edit ? input : await storedFiles(deps.files, ctx.user.userId, place.user.metadata.files);
  const attached = await attachFiles(deps.prepareAttachments, sent.files, sent.storedPaths);
  yield* await t.commit(async (tx) => {
    await setBranchHead(tx, conversationId, t.branch, left);
    const branch = await insertBranch(tx, { conversationId, parentBranch: place.parent, fromSeq: place.fromSeq, fromMessageSeq: place.fromMessageSeq, headCheckpoint: fork?.checkpointId ?? null });
    t.setBranch(branch);
    const drafts: EventDraft[] = [{ kind: 'branch.forked', payload: { run_id: ctx.runId, from_seq: place.fromSeq, parent_branch: place.parent } }];
    if (edit) {
      await t.transcript.user(input.text, attached.files, tx);
      drafts.push({ kind: 'user.message', payload: { run_id: ctx.runId, request_id: input.requestId, text: input.text, files: attached.files } });
    } else t.answering(place.fromSeq - 1); // a regenerate answers the message it keeps
    return drafts;
  });
  const text = (edit ? input.text : place.user.content) || FILES_ONLY;
  const callerSystem = [runContext.callerSystem, BRANCH_NOTE].filter(Boolean).join('\n\n');
  return deps.agent.run({ ...runContext, callerSystem, text, attachments: attached.parts, fromCheckpoint: fork?.checkpointId ?? null, replaces: fork?.replaces ?? null });
}

async function forkPlace(db: Queryable, conversationId: string, state: BranchState | null, messageId: string | null, edit: boolean): Promise<ForkPlace> {
  const { shown, rows } = await messageBranch(db, conversationId, state, messageId);
  const at = rows.findIndex((m) => m.id === messageId);
  const target = rows[at];
  if (!target) throw new AirlockError('VALIDATION_ERROR', 'message_id: no such message on the branch the conversation shows.');
  if (edit && target.role !== 'user') throw new AirlockError('VALIDATION_ERROR', 'message_id: only a user message can be edited.');
  if (!edit && target.role !== 'assistant') throw new AirlockError('VALIDATION_ERROR', 'message_id: only an answer can be regenerated.');
  const user = edit ? target : rows.slice(0, at).findLast((m) => m.role === 'user');
  if (!user) throw new AirlockError('VALIDATION_ERROR', 'message_id: this answer has no message to answer again.');
  const humanIndex = rows.filter((m) => m.role === 'user' && Number(m.seq) < Number(user.seq)).length;
  const event = (await userMessageEvents(db, conversationId, state, shown))[humanIndex];
  if (event === undefined) throw new AirlockError('CONFLICT', 'This message has no place in the conversation log to branch from.');
  const from = edit ? { message: Number(user.seq), ledger: event } : { message: Number(user.seq) + 1, ledger: event + 1 };
  // A branch with nothing of its own before this place forked here too: the new one is its sibling.
  const hung = forkPoint(forksOf(state?.branches ?? [], 'messages'), shown, from.message, (b, seq) =>
    rows.some((m) => m.branch === b && Number(m.seq) < seq),
  );
  const via = hung.via === null ? null : state?.branches.find((b) => b.branch === hung.via);
  return { user, humanIndex, parent: hung.parent, fromMessageSeq: hung.from, fromSeq: via?.fromSeq ?? from.ledger };
}

/**
 * The branch whose rows hold the message, with those rows: the shown branch, or the one it forked
 * from when the message is what the shown branch replaced. That is a retried Edit or Regenerate
 * (its run failed after the fork committed, and the UI sends the same fork again): it forks the
 * same place once more, a sibling of the failed branch, rather than a dead end.
 */
async function messageBranch(db: Queryable, conversationId: string, state: BranchState | null, messageId: string | null): Promise<{ shown: number; rows: Message[] }> {
  const active = state?.active ?? 0;
  const rows = await listPathMessages(db, conversationId, messagePath(state, active));
  const fork = state?.branches.find((b) => b.branch === active);
  if (rows.some((m) => m.id === messageId) || fork?.parentBranch == null || fork.fromMessageSeq === null) return { shown: active, rows };
  const parentRows = await listPathMessages(db, conversationId, messagePath(state, fork.parentBranch));
  const replaced = parentRows.find((m) => m.id === messageId && Number(m.seq) >= fork.fromMessageSeq!);
  return replaced ? { shown: fork.parentBranch, rows: parentRows } : { shown: active, rows };
}

/** The seqs of the user.message events the branch shows, oldest first. */
async function userMessageEvents(db: Queryable, conversationId: string, state: BranchState | null, branch: number): Promise<number[]> {
  const path = branchPath(forksOf(state?.branches ?? [], 'ledger'), branch);
  const { rows } = await db.query<{ seq: string; branch: number | null }>(
    `SELECT seq, (payload ->> 'branch')::int AS branch FROM conversation_events WHERE conversation_id = $1 AND kind = 'user.message' ORDER BY seq`,
    [conversationId],
  );
  return rows.filter((r) => onPath(path, r.branch ?? 0, Number(r.seq))).map((r) => Number(r.seq));
}
