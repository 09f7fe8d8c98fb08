/**
 * What an export of a conversation reads (issue 29 item 4): the messages of one branch oldest
 * first (issue 37 item 8: the branch shown, not every branch one after another), and its approvals
 * with who decided them (a username: resolved_by is a user id as text).
 * @module
 */
import { messagePath, readBranches } from './branches.ts';
import { listPathMessages } from './messages.ts';
import type { Queryable } from './pool.ts';

export interface ExportApproval {
  id: string;
  tool: string;
  status: string;
  decidedBy: string | null;
  decidedAt: Date | null;
}

export interface ExportMessage {
  id: string;
  role: string;
  content: string;
  metadata: Record<string, unknown>;
  createdAt: Date;
}

/** The branch an export shows: its number, and how many branches the conversation has (1: never forked). */
export interface ExportBranch {
  branch: number;
  count: number;
}

/**
 * The messages of `branch` (absent: the active one), oldest first: its parents' rows before each
 * fork, then its own (exports are whole; no paging). Null: the conversation has no such branch.
 */
export async function branchMessages(q: Queryable, conversationId: string, asked?: number): Promise<{ messages: ExportMessage[]; shown: ExportBranch } | null> {
  const state = await readBranches(q, conversationId);
  const branch = asked ?? state?.active ?? 0;
  if (branch !== 0 && !state?.branches.some((b) => b.branch === branch)) return null;
  const rows = await listPathMessages(q, conversationId, messagePath(state, branch));
  const count = new Set([0, ...(state?.branches ?? []).map((b) => b.branch)]).size;
  return { messages: rows.map((r) => ({ id: r.id, role: r.role, content: r.content, metadata: r.metadata ?? {}, createdAt: r.createdAt })), shown: { branch, count } };
}

/** The conversation's approvals, oldest first, with the decider's username. */
export async function conversationApprovals(q: Queryable, conversationId: string): Promise<ExportApproval[]> {
  const { rows } = await q.query<{ id: string; tool: string; status: string; username: string | null; resolved_by: string | null; resolved_at: Date | null }>(
    `SELECT a.id, a.tool, a.status, u.username, a.resolved_by, a.resolved_at
       FROM approvals a LEFT JOIN users u ON u.id::text = a.resolved_by
      WHERE a.conversation_id = $1 ORDER BY a.created_at`,
    [conversationId],
  );
  return rows.map((r) => ({ id: r.id, tool: r.tool, status: r.status, decidedBy: r.username ?? r.resolved_by, decidedAt: r.resolved_at }));
}
