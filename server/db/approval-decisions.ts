/**
 * Each decision made on an approval (migration 150): who, approve or deny, when, by which channel.
 * One row per approver (the key), so nobody counts twice. The decision step takes the approval's
 * row lock first (`lockPendingApproval`), so two approvers committing at once are counted in turn.
 * @module
 */
import type { Queryable } from './pool.ts';

export type DecisionKind = 'approve' | 'deny';

export interface ApprovalDecisionRow {
  approvalId: string;
  userId: string;
  username: string;
  decision: DecisionKind;
  decidedAt: Date;
  channel: string;
  note: string | null;
  /** The approver's passkey signature (migration 175, issue 28 step-up), as the receipt carries it. */
  passkey?: PasskeyProofJson | null;
}

/** audit/passkey.ts's PasskeyProof, stored as it is. */
type PasskeyProofJson = { credential_id: string; public_key_jwk: Record<string, unknown>; authenticator_data: string; client_data_json: string; signature: string; nonce: string };

/**
 * Locks the approval's row until the transaction ends; null when it is not pending any more, else
 * its requester (tenant null: no such user any more).
 */
export async function lockPendingApproval(q: Queryable, approvalId: string): Promise<{ id: string; tenant: string | null } | null> {
  // The requester's tenant comes with the lock: the approver rules need it, and a second read of
  // the requester on every decision was one query too many (issue 26 performance review).
  const { rows } = await q.query<{ id: string; tenant: string | null }>(
    `SELECT a.requested_by AS id, u.tenant FROM approvals a LEFT JOIN users u ON u.id::text = a.requested_by WHERE a.id = $1 AND a.status = 'pending' FOR UPDATE OF a`,
    [approvalId],
  );
  return rows[0] ?? null;
}

/** Records one approver's decision; false when they had already decided this approval. */
export async function insertApprovalDecision(q: Queryable, d: Omit<ApprovalDecisionRow, 'username'>): Promise<boolean> {
  const { rowCount } = await q.query(
    `INSERT INTO approval_decisions (approval_id, user_id, decision, decided_at, channel, note, passkey) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (approval_id, user_id) DO NOTHING`,
    [d.approvalId, d.userId, d.decision, d.decidedAt, d.channel, d.note, d.passkey ? JSON.stringify(d.passkey) : null],
  );
  return rowCount === 1;
}

/** Forgets the decisions so far (an edit changed the action: every approver decides again, issue 27). */
export async function clearApprovalDecisions(q: Queryable, approvalId: string): Promise<void> {
  await q.query('DELETE FROM approval_decisions WHERE approval_id = $1', [approvalId]);
}

/** The decisions of these approvals, oldest first, with each approver's username. */
export async function listApprovalDecisions(q: Queryable, approvalIds: readonly string[]): Promise<ApprovalDecisionRow[]> {
  if (approvalIds.length === 0) return [];
  const { rows } = await q.query<{ approval_id: string; user_id: string; username: string | null; decision: DecisionKind; decided_at: Date; channel: string; note: string | null; passkey: PasskeyProofJson | null }>(
    `SELECT d.approval_id, d.user_id, u.username, d.decision, d.decided_at, d.channel, d.note, d.passkey
     FROM approval_decisions d LEFT JOIN users u ON u.id::text = d.user_id
     WHERE d.approval_id = ANY($1::uuid[]) ORDER BY d.decided_at, d.user_id`,
    [approvalIds],
  );
  return rows.map((r) => ({ approvalId: r.approval_id, userId: r.user_id, username: r.username ?? '', decision: r.decision, decidedAt: r.decided_at, channel: r.channel, note: r.note, passkey: r.passkey }));
}

/** A decider as the approver rules need them (approvals/approvers.ts Person); null for an unknown id. */
export async function findPerson(q: Queryable, userId: string): Promise<{ id: string; username: string; role: string; tenant: string } | null> {
  if (!/^[0-9a-f-]{36}$/i.test(userId)) return null;
  const { rows } = await q.query<{ id: string; username: string; role: string; tenant: string }>(`SELECT id::text, username, role, tenant FROM users WHERE id = $1`, [userId]);
  return rows[0] ?? null;
}

/** One pending approval as a decider's attempt is checked against (approvals/approvers.ts attemptRefusal). */
export interface AttemptTarget {
  id: string;
  tool: string;
  requestedBy: string;
  /** Null: the requester is no user any more. */
  requesterTenant: string | null;
  terms: { required: number; roles: string[]; users: string[]; distinctFromRequester: boolean };
  /** Whom it escalates to, and when it opened (the escalation's clock). */
  escalate: { afterS: number; roles: string[] } | null;
  createdAt: Date;
  decisions: Array<{ userId: string; decision: DecisionKind }>;
  expiresAt: Date;
}

/**
 * What a decision attempt on a conversation is checked against before its turn is submitted, in
 * one read: its pending approvals (the one named, or all of them), each with its terms, requester
 * and decisions so far, and the decider.
 */
export async function readDecisionAttempt(
  q: Queryable,
  a: { conversationId: string; approvalId: string | null; deciderId: string },
): Promise<{ decider: { id: string; username: string; role: string; tenant: string } | null; pending: AttemptTarget[] }> {
  if (!/^[0-9a-f-]{36}$/i.test(a.conversationId) || (a.approvalId !== null && !/^[0-9a-f-]{36}$/i.test(a.approvalId))) return { decider: null, pending: [] };
  const { rows } = await q.query<{
    id: string | null; tool: string; created_at: Date; expires_at: Date; requested_by: string; requester_tenant: string | null; approvals_required: number; approver_roles: string[]; approver_users: string[]; distinct_from_requester: boolean;
    escalate_after_s: number | null; escalate_roles: string[] | null;
    decisions: Array<{ user_id: string; decision: DecisionKind }>; me_id: string | null; me_username: string; me_role: string; me_tenant: string;
  }>(
    `SELECT a.id, a.tool, a.created_at, a.expires_at, a.requested_by, req.tenant AS requester_tenant, a.approvals_required, a.approver_roles, a.approver_users, a.distinct_from_requester,
            a.escalate_after_s, a.escalate_roles,
            (SELECT coalesce(json_agg(json_build_object('user_id', d.user_id, 'decision', d.decision)), '[]'::json) FROM approval_decisions d WHERE d.approval_id = a.id) AS decisions,
            me.id::text AS me_id, me.username AS me_username, me.role AS me_role, me.tenant AS me_tenant
       FROM (SELECT 1) one
       LEFT JOIN users me ON me.id::text = $3
       LEFT JOIN approvals a ON a.conversation_id = $1::uuid AND a.status = 'pending' AND ($2::uuid IS NULL OR a.id = $2::uuid)
       LEFT JOIN users req ON req.id::text = a.requested_by
      ORDER BY a.created_at, a.id`,
    [a.conversationId, a.approvalId, a.deciderId],
  );
  const me = rows.find((r) => r.me_id);
  return {
    decider: me ? { id: me.me_id!, username: me.me_username, role: me.me_role, tenant: me.me_tenant } : null,
    pending: rows.filter((r) => r.id).map((r) => ({
      id: r.id!, tool: r.tool, requestedBy: r.requested_by, requesterTenant: r.requester_tenant,
      terms: { required: r.approvals_required, roles: r.approver_roles, users: r.approver_users, distinctFromRequester: r.distinct_from_requester },
      escalate: r.escalate_after_s ? { afterS: r.escalate_after_s, roles: r.escalate_roles ?? [] } : null,
      createdAt: r.created_at,
      decisions: r.decisions.map((d) => ({ userId: d.user_id, decision: d.decision })),
      expiresAt: r.expires_at,
    })),
  };
}
