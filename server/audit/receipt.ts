/**
 * Approval receipts (issue 28 item 2): what a receipt says and how anyone checks it. A receipt is
 * a compact JWS (ES256, header typ `airlock-receipt+jwt`, the server's signing key, its kid in
 * `GET /api/auth/jwks.json`) over the claims below; signing is the server's (approvals/receipt.ts),
 * checking needs only the JWKS and, to tie it to an action, the action itself: the object whose
 * canonical SHA-256 is the approval's action hash, `{tool, args, user}` (`user` the requester's id,
 * approvals/rules.ts actionHash). An approver who signed with a passkey (step-up) has their
 * signature checked too, over the same action hash (audit/passkey.ts).
 * @module
 */
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { hashJson } from '../canonical-json.ts';
import { passkeyProofIssue, type PasskeyProof } from './passkey.ts';

export const RECEIPT_TYP = 'airlock-receipt+jwt';
export const RECEIPT_ALG = 'ES256';

export interface ReceiptApprover {
  /** The approver's username. */
  user: string;
  decided_at: string;
  /** How the decision came: chat, ag-ui, api, or the path it came by. */
  channel: string;
  /** The approver's own signature over the action hash, when the rule asked for a step-up (audit/passkey.ts). */
  passkey?: PasskeyProof;
}

export interface ReceiptClaims {
  approval_id: string;
  action_hash: string;
  /** The hash of the action as first asked, when it was edited before approval. */
  original_action_hash?: string;
  tool: string;
  decision: 'approved' | 'denied' | 'expired';
  approvers: ReceiptApprover[];
  /** The requester's username. */
  requester: string;
  /** SHA-256 of the canonical policy decision that paused the call ({scope, action, matched}). */
  policy_hash: string;
  /** The chain hash of the decision's audit row. */
  audit_hash: string;
  nonce: string;
  iat: number;
}

export type ReceiptCheck = { ok: true; claims: ReceiptClaims; kid: string } | { ok: false; reason: string };

const CLAIMS = ['approval_id', 'action_hash', 'tool', 'decision', 'approvers', 'requester', 'policy_hash', 'audit_hash', 'nonce', 'iat'] as const;

/**
 * Checks a receipt's signature against a JWKS, its header and claims, and, when `action` is given,
 * that the action hashes to the receipt's action_hash. Never throws: a refusal says why.
 */
export async function verifyReceipt(receipt: string, jwks: JSONWebKeySet, action?: unknown): Promise<ReceiptCheck> {
  let claims: ReceiptClaims;
  let kid: string;
  try {
    const verified = await jwtVerify(receipt.trim(), createLocalJWKSet(jwks), { algorithms: [RECEIPT_ALG], typ: RECEIPT_TYP });
    claims = verified.payload as unknown as ReceiptClaims;
    kid = verified.protectedHeader.kid ?? '';
  } catch (error) {
    return { ok: false, reason: `signature: ${(error as Error).message}` };
  }
  const missing = CLAIMS.filter((c) => claims[c] === undefined);
  if (missing.length > 0) return { ok: false, reason: `claims missing: ${missing.join(', ')}` };
  // Each approver's own signature, where there is one, over the action hash the receipt names.
  for (const approver of Array.isArray(claims.approvers) ? claims.approvers : []) {
    const issue = approver.passkey ? passkeyProofIssue(approver.passkey, claims.action_hash) : null;
    if (issue) return { ok: false, reason: `passkey of ${approver.user}: ${issue}` };
  }
  if (action !== undefined) {
    const hash = hashJson(action);
    if (hash !== claims.action_hash) return { ok: false, reason: `action: its hash ${hash} is not the receipt's action_hash ${claims.action_hash}` };
  }
  return { ok: true, claims, kid };
}

/** The one line `receipt verify` prints. */
export function receiptLine(check: ReceiptCheck): string {
  return check.ok ? `ok receipt ${check.claims.approval_id} (${check.claims.decision} ${check.claims.tool}, kid ${check.kid})` : `refused: ${check.reason}`;
}
