/**
 * One-use decision links (migration 152): minted hashed, read by hash, consumed in the decision's
 * transaction. The token itself is never stored.
 * @module
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { Queryable } from './pool.ts';
import { ESCALATED_ROLES_SQL } from './escalation.ts';

export interface ApprovalLink {
  approvalId: string;
  userId: string;
  actionHash: string;
  expiresAt: Date;
  usedAt: Date | null;
}

/** Pure: the stored form of a token. */
export const linkHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * Where a notification's links go: the token of (approval, approver, action) for this receiver is
 * derived with its key (an HMAC), so minting it again (a delivery retry, the receiver's next event
 * of the approval) gives the same token and stores nothing new. Only its hash is stored.
 */
export interface LinkReceiver {
  secret: string;
  receiver: string;
}

/** Pure: the token of one link for one receiver. */
export function derivedLinkToken(to: LinkReceiver, l: Pick<ApprovalLink, 'approvalId' | 'userId' | 'actionHash'>): string {
  return createHmac('sha256', to.secret).update(`airlock.approval-link.v1\n${to.receiver}\n${l.approvalId}\n${l.userId}\n${l.actionHash}`).digest('base64url');
}

/**
 * Mints a link for `userId` on an approval; returns the token (shown in the notification). Random,
 * or derived for a receiver (`to`): then minting the same link again reuses the stored one.
 */
export async function mintApprovalLink(q: Queryable, l: Omit<ApprovalLink, 'usedAt'>, to?: LinkReceiver): Promise<string> {
  const token = to ? derivedLinkToken(to, l) : randomBytes(32).toString('base64url');
  await q.query(
    `INSERT INTO approval_links (token_hash, approval_id, user_id, action_hash, expires_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (token_hash) DO NOTHING`,
    [linkHash(token), l.approvalId, l.userId, l.actionHash, l.expiresAt],
  );
  return token;
}

/** The link of a token, or null (forged, or of another database). */
export async function findApprovalLink(q: Queryable, token: string): Promise<ApprovalLink | null> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return null;
  const { rows } = await q.query<{ approval_id: string; user_id: string; action_hash: string; expires_at: Date; used_at: Date | null }>(
    `SELECT approval_id, user_id, action_hash, expires_at, used_at FROM approval_links WHERE token_hash = $1`,
    [linkHash(token)],
  );
  const r = rows[0];
  return r ? { approvalId: r.approval_id, userId: r.user_id, actionHash: r.action_hash, expiresAt: r.expires_at, usedAt: r.used_at } : null;
}

/**
 * Consumes a link in `q` (the decision's transaction): true once, for its approval, approver and
 * action hash, before its expiry; false otherwise (used, expired, or not bound to these).
 */
export async function consumeApprovalLink(q: Queryable, c: { tokenHash: string; approvalId: string; userId: string; actionHash: string | null; now: Date }): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE approval_links SET used_at = $5 WHERE token_hash = $1 AND approval_id = $2 AND user_id = $3 AND action_hash = $4 AND used_at IS NULL AND expires_at > $5`,
    [c.tokenHash, c.approvalId, c.userId, c.actionHash ?? '', c.now],
  );
  return rowCount === 1;
}

/** The users who may approve under these terms in a tenant (the designated approvers a notification links), with the roles it escalated to. */
export async function designatedApprovers(q: Queryable, a: { tenant: string; requestedBy: string; roles: string[]; users: string[]; distinctFromRequester: boolean; decided: string[]; escalated?: string[] }): Promise<Array<{ id: string; username: string }>> {
  const named = a.roles.length > 0 || a.users.length > 0;
  const { rows } = await q.query<{ id: string; username: string }>(
    `SELECT id::text, username FROM users WHERE tenant = $1
       AND ((CASE WHEN $2 THEN (role = ANY($3::text[]) OR username = ANY($4::text[])) ELSE (id::text = $5 OR role = 'admin') END) OR role = ANY($8::text[]))
       AND NOT ($6 AND id::text = $5) AND NOT (id::text = ANY($7::text[]))
     ORDER BY username LIMIT 20`,
    [a.tenant, named, a.roles, a.users, a.requestedBy, a.distinctFromRequester, a.decided, a.escalated ?? []],
  );
  return rows;
}

/**
 * Mints one link per designated approver of a pending approval (who has not decided yet), each
 * expiring with the approval; returns `{user (username), token}`. `only`: that user's link alone,
 * none when they are not one of its approvers (the OpenAI face shows its caller their own).
 */
export async function mintLinksForApproval(q: Queryable, approvalId: string, to?: LinkReceiver, only?: string): Promise<Array<{ user: string; token: string }>> {
  const { rows } = await q.query<{ action_hash: string | null; expires_at: Date; requested_by: string; tenant: string; approver_roles: string[]; approver_users: string[]; distinct_from_requester: boolean; escalated: string[]; decided: string[] }>(
    `SELECT COALESCE(a.final_action_hash, a.action_hash) AS action_hash, a.expires_at, a.requested_by, u.tenant, a.approver_roles, a.approver_users, a.distinct_from_requester, ${ESCALATED_ROLES_SQL} AS escalated,
            ARRAY(SELECT d.user_id FROM approval_decisions d WHERE d.approval_id = a.id) AS decided
     FROM approvals a JOIN users u ON u.id::text = a.requested_by WHERE a.id = $1 AND a.status = 'pending'`,
    [approvalId],
  );
  const a = rows[0];
  if (!a?.action_hash) return [];
  const approvers = await designatedApprovers(q, { tenant: a.tenant, requestedBy: a.requested_by, roles: a.approver_roles, users: a.approver_users, distinctFromRequester: a.distinct_from_requester, decided: a.decided, escalated: a.escalated });
  const links = [];
  for (const u of approvers.filter((x) => only === undefined || x.id === only)) links.push({ user: u.username, token: await mintApprovalLink(q, { approvalId, userId: u.id, actionHash: a.action_hash, expiresAt: a.expires_at }, to) });
  return links;
}

/** True while the approval's action is still the one the link was minted for. */
export async function linkMatchesAction(q: Queryable, link: Pick<ApprovalLink, 'approvalId' | 'actionHash'>): Promise<boolean> {
  const { rows } = await q.query<{ action_hash: string | null }>(`SELECT COALESCE(final_action_hash, action_hash) AS action_hash FROM approvals WHERE id = $1`, [link.approvalId]);
  return rows[0]?.action_hash === link.actionHash;
}

/** Revokes the approval's open links (an edit changed the action they were sent for); returns how many. */
export async function revokeOpenLinks(q: Queryable, approvalId: string, now: Date): Promise<number> {
  const { rowCount } = await q.query(`UPDATE approval_links SET expires_at = $2 WHERE approval_id = $1 AND used_at IS NULL AND expires_at > $2`, [approvalId, now]);
  return rowCount ?? 0;
}
