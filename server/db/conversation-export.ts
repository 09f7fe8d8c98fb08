/**
 * What an export of a conversation reads (issue 29 item 4): every message oldest first, and its
 * approvals with who decided them (a username: resolved_by is a user id as text).
 * @module
 */
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

/** The conversation's messages, oldest first (exports are whole; no paging). */
export async function allMessages(q: Queryable, conversationId: string): Promise<ExportMessage[]> {
  const { rows } = await q.query<{ id: string; role: string; content: string; metadata: Record<string, unknown> | null; created_at: Date }>(
    'SELECT id, role, content, metadata, created_at FROM messages WHERE conversation_id = $1 ORDER BY seq',
    [conversationId],
  );
  return rows.map((r) => ({ id: r.id, role: r.role, content: r.content, metadata: r.metadata ?? {}, createdAt: r.created_at }));
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
