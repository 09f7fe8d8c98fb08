/**
 * Passkeys (migration 175, issue 28 item 3): each user's registered WebAuthn credentials, and the
 * server-issued challenges of the ceremonies, single use and short-lived, kept here so that any
 * replica verifies what another issued.
 * @module
 */
import type { Queryable } from './pool.ts';

export interface PasskeyCredential {
  id: string;
  userId: string;
  /** The COSE public key as the authenticator gave it. */
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

interface Row {
  id: string;
  user_id: string;
  public_key: Buffer;
  counter: string;
  transports: string[];
  name: string;
  created_at: Date;
  last_used_at: Date | null;
}

const toCredential = (r: Row): PasskeyCredential => ({
  id: r.id, userId: r.user_id, publicKey: new Uint8Array(r.public_key), counter: Number(r.counter), transports: r.transports, name: r.name, createdAt: r.created_at, lastUsedAt: r.last_used_at,
});

export async function insertPasskey(q: Queryable, c: Pick<PasskeyCredential, 'id' | 'userId' | 'publicKey' | 'counter' | 'transports' | 'name'>): Promise<PasskeyCredential> {
  const { rows } = await q.query<Row>(
    `INSERT INTO passkey_credentials (id, user_id, public_key, counter, transports, name) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [c.id, c.userId, Buffer.from(c.publicKey), c.counter, c.transports, c.name],
  );
  return toCredential(rows[0]);
}

export async function listPasskeys(q: Queryable, userId: string): Promise<PasskeyCredential[]> {
  const { rows } = await q.query<Row>('SELECT * FROM passkey_credentials WHERE user_id = $1 ORDER BY created_at, id', [userId]);
  return rows.map(toCredential);
}

export async function getPasskey(q: Queryable, userId: string, id: string): Promise<PasskeyCredential | null> {
  const { rows } = await q.query<Row>('SELECT * FROM passkey_credentials WHERE user_id = $1 AND id = $2', [userId, id]);
  return rows[0] ? toCredential(rows[0]) : null;
}

/** False when the user has no such passkey. */
export async function deletePasskey(q: Queryable, userId: string, id: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM passkey_credentials WHERE user_id = $1 AND id = $2', [userId, id]);
  return rowCount === 1;
}

/** After a verified assertion: the authenticator's new signature counter. */
export async function touchPasskey(q: Queryable, id: string, counter: number, at: Date): Promise<void> {
  await q.query('UPDATE passkey_credentials SET counter = $2, last_used_at = $3 WHERE id = $1', [id, counter, at]);
}

export interface PasskeyChallenge {
  nonce: string;
  userId: string;
  approvalId: string | null;
  challenge: string;
  expiresAt: Date;
}

/** Issues a challenge; expired ones are swept on the way (they can never be used). */
export async function insertChallenge(q: Queryable, c: PasskeyChallenge): Promise<void> {
  await q.query('DELETE FROM passkey_challenges WHERE expires_at < now()');
  await q.query('INSERT INTO passkey_challenges (nonce, user_id, approval_id, challenge, expires_at) VALUES ($1, $2, $3, $4, $5)', [c.nonce, c.userId, c.approvalId, c.challenge, c.expiresAt]);
}

/**
 * Uses a challenge up: it is deleted whether or not what follows verifies, so each nonce is tried
 * once (only by its own user: nobody else can spend it). Null when it is unknown, used, another
 * user's or approval's, or expired.
 */
export async function takeChallenge(q: Queryable, c: { nonce: string; userId: string; approvalId: string | null; now: Date }): Promise<PasskeyChallenge | null> {
  const { rows } = await q.query<{ nonce: string; user_id: string; approval_id: string | null; challenge: string; expires_at: Date }>(
    `DELETE FROM passkey_challenges WHERE nonce = $1 AND user_id = $2 RETURNING *`,
    [c.nonce, c.userId],
  );
  const r = rows[0];
  if (!r || r.approval_id !== c.approvalId || r.expires_at.getTime() <= c.now.getTime()) return null;
  return { nonce: r.nonce, userId: r.user_id, approvalId: r.approval_id, challenge: r.challenge, expiresAt: r.expires_at };
}
