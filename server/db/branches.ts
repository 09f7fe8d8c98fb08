/**
 * A conversation's branches (migration 181, issue 29 item 2): the forks, the branch it shows
 * (`active_branch`) and the branch its LangGraph thread stands on (`thread_branch`). Branch 0 has
 * a row only once the conversation forked (its head checkpoint is kept there when it is left).
 * @module
 */
import { branchPath, type BranchFork, type BranchPath } from '../../src/lib/wire/branches.ts';
import type { Queryable } from './pool.ts';

export interface BranchRow {
  branch: number;
  /** Null for branch 0. */
  parentBranch: number | null;
  /** Where it left its parent in the ledger (conversation_events.seq). */
  fromSeq: number | null;
  /** Where it left its parent in the history (messages.seq). */
  fromMessageSeq: number | null;
  /** Where the thread stood on it when it was last left; a new fork's: the checkpoint it starts from. */
  headCheckpoint: string | null;
}

/** The branch the conversation shows and the one its thread stands on (read with the turn's lease, db/turn-opening.ts). */
export interface BranchAt {
  active: number;
  thread: number;
  /** It has forked at least once (a row in conversation_branches). */
  forked: boolean;
}

export interface BranchState extends Omit<BranchAt, 'forked'> {
  branches: BranchRow[];
}

interface Row {
  branch: number;
  parent_branch: number | null;
  from_seq: string | null;
  from_message_seq: string | null;
  head_checkpoint: string | null;
}

const num = (v: string | null) => (v === null ? null : Number(v));

/** The conversation's active and thread branch and its forks (one round trip). Null: no such conversation. */
export async function readBranches(q: Queryable, conversationId: string): Promise<BranchState | null> {
  const { rows } = await q.query<{ active_branch: number; thread_branch: number; branches: Row[] | null }>(
    `SELECT c.active_branch, c.thread_branch,
            (SELECT json_agg(b ORDER BY b.branch) FROM (SELECT branch, parent_branch, from_seq::text, from_message_seq::text, head_checkpoint
               FROM conversation_branches WHERE conversation_id = c.id) b) AS branches
       FROM conversations c WHERE c.id = $1`,
    [conversationId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    active: row.active_branch,
    thread: row.thread_branch,
    branches: (row.branches ?? []).map((b) => ({ branch: b.branch, parentBranch: b.parent_branch, fromSeq: num(b.from_seq), fromMessageSeq: num(b.from_message_seq), headCheckpoint: b.head_checkpoint })),
  };
}

/** The forks as positions in the history (message seqs) or in the ledger (event seqs). */
export function forksOf(branches: readonly BranchRow[], positions: 'messages' | 'ledger'): BranchFork[] {
  return branches.flatMap((b) => {
    const from = positions === 'messages' ? b.fromMessageSeq : b.fromSeq;
    return b.parentBranch === null || from === null ? [] : [{ branch: b.branch, parent: b.parentBranch, from }];
  });
}

/** The history path of a branch (which rows it shows). */
export function messagePath(state: BranchState | null, branch: number): BranchPath {
  return branchPath(state ? forksOf(state.branches, 'messages') : [], branch);
}

/** Records where the thread stood on `branch` as it leaves it (the row of branch 0 is made here). */
export async function setBranchHead(q: Queryable, conversationId: string, branch: number, checkpointId: string | null): Promise<void> {
  await q.query(
    `INSERT INTO conversation_branches (conversation_id, branch, head_checkpoint) VALUES ($1, $2, $3)
     ON CONFLICT (conversation_id, branch) DO UPDATE SET head_checkpoint = EXCLUDED.head_checkpoint`,
    [conversationId, branch, checkpointId],
  );
}

/** A new branch, active at once, the thread on it. Returns its number (one more than the highest). */
export async function insertBranch(
  q: Queryable,
  input: { conversationId: string; parentBranch: number; fromSeq: number; fromMessageSeq: number; headCheckpoint: string | null },
): Promise<number> {
  const { rows } = await q.query<{ branch: number }>(
    `WITH next AS (SELECT coalesce(max(branch), 0) + 1 AS branch FROM conversation_branches WHERE conversation_id = $1),
          ins AS (INSERT INTO conversation_branches (conversation_id, branch, parent_branch, from_seq, from_message_seq, head_checkpoint)
                  SELECT $1, next.branch, $2, $3, $4, $5 FROM next RETURNING branch)
     UPDATE conversations c SET active_branch = ins.branch, thread_branch = ins.branch FROM ins WHERE c.id = $1 RETURNING ins.branch`,
    [input.conversationId, input.parentBranch, input.fromSeq, input.fromMessageSeq, input.headCheckpoint],
  );
  return rows[0].branch;
}

/** The branch the conversation shows (branch.switched). False when it has no such branch. */
export async function setActiveBranch(q: Queryable, conversationId: string, branch: number): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE conversations c SET active_branch = $2
      WHERE c.id = $1 AND ($2 = 0 OR EXISTS (SELECT 1 FROM conversation_branches b WHERE b.conversation_id = $1 AND b.branch = $2))`,
    [conversationId, branch],
  );
  return (rowCount ?? 0) > 0;
}

/** The thread now stands on `branch` (moved there by the turn that found it elsewhere). */
export async function setThreadBranch(q: Queryable, conversationId: string, branch: number): Promise<void> {
  await q.query('UPDATE conversations SET thread_branch = $2 WHERE id = $1', [conversationId, branch]);
}
