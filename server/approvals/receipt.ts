/**
 * Signs and stores the receipt of a decision (issue 28 item 2), in the decision's transaction: the
 * claims (audit/receipt.ts) name the action's hash, the tool, the outcome, who decided by which
 * channel, the requester, the policy decision's hash and the chain hash of the decision's audit
 * row, signed with the server's signing key (the pool's key store, auth/keys.ts: its kid is in the
 * JWKS). Called once per decision by decideApprovals, after the audit row.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { keyStoreFor } from '../auth/index.ts';
import type { PasskeyProof } from '../audit/passkey.ts';
import { RECEIPT_ALG, RECEIPT_TYP, type ReceiptApprover, type ReceiptClaims } from '../audit/receipt.ts';
import { hashJson } from '../canonical-json.ts';
import type { ApprovalDecisionRow } from '../db/approval-decisions.ts';
import { insertReceipt } from '../db/approval-receipts.ts';
import type { Approval } from '../db/approvals.ts';
import { poolOf, type Queryable } from '../db/index.ts';
import { actionHash } from './rules.ts';
import { channelOf, type DecisionOrigin } from './types.ts';

export interface ReceiptInput {
  approval: Approval;
  decider: { id: string; username: string } | null;
  origin: DecisionOrigin | undefined;
  auditHash: string;
  /** Every approver's recorded decision (M-of-N, issue 26); empty when the decision was not a person's count (expiry). */
  decisions?: readonly ApprovalDecisionRow[];
  /** The requester's username (read in the transaction when the decider is someone else). */
  requester: string;
}

/** Pure: the claims of one decision's receipt. */
export function receiptClaims(input: ReceiptInput, nonce: string, iat: number): ReceiptClaims {
  const { approval } = input;
  const approvers: ReceiptApprover[] = input.decisions?.length
    ? input.decisions.map((d) => ({ user: d.username, decided_at: d.decidedAt.toISOString(), channel: d.channel, ...(d.passkey ? { passkey: d.passkey as PasskeyProof } : {}) }))
    : input.decider
    ? [{ user: input.decider.username, decided_at: (approval.resolvedAt ?? new Date(iat * 1000)).toISOString(), channel: channelOf(input.origin) }]
    : [];
  return {
    approval_id: approval.id,
    // What ran: an edited approval names the final action, and the one first asked (issue 27/28).
    action_hash: approval.finalActionHash ?? approval.actionHash ?? actionHash({ tool: approval.tool, args: approval.args, userId: approval.requestedBy }),
    ...(approval.finalActionHash && approval.actionHash ? { original_action_hash: approval.actionHash } : {}),
    tool: approval.tool,
    decision: approval.status as ReceiptClaims['decision'],
    approvers,
    requester: input.requester,
    policy_hash: hashJson(approval.policy),
    audit_hash: input.auditHash,
    nonce,
    iat,
  };
}

/** Signs the decision's receipt and stores it in `tx` (the decision's transaction). */
export async function writeReceipt(tx: Queryable, input: Omit<ReceiptInput, 'requester'>): Promise<void> {
  const pool = poolOf(tx);
  if (!pool) throw new Error('a receipt is written in a transaction of a pool made by createPool');
  const { kid, key } = await keyStoreFor(pool).signingKey();
  const requester =
    input.decider?.id === input.approval.requestedBy
      ? input.decider.username
      : ((await tx.query<{ username: string }>('SELECT username FROM users WHERE id::text = $1', [input.approval.requestedBy])).rows[0]?.username ?? input.approval.requestedBy);
  const claims = receiptClaims({ ...input, requester }, randomBytes(16).toString('base64url'), Math.floor(Date.now() / 1000));
  const receipt = await new SignJWT({ ...claims }).setProtectedHeader({ alg: RECEIPT_ALG, kid, typ: RECEIPT_TYP }).sign(key);
  await insertReceipt(tx, { approvalId: input.approval.id, kid, receipt });
}
