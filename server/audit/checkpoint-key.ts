/**
 * The audit checkpoint key (issue 36 item 3): an Ed25519 key a database writer does not hold. The
 * chain's hashes are unkeyed and its head lives beside the rows, so whoever can write the database
 * can rewrite a row and every later hash and head; and the receipts' key is a row of `signing_keys`,
 * which a writer can add. This key is derived by HKDF-SHA256 (info `airlock audit checkpoint`) from
 * the key-encryption key (KEY_ENCRYPTION_KEY or DATA_DIR's key-encryption.key), computed at start and
 * never stored. A checkpoint is a compact JWS (alg Ed25519, typ `airlock-audit-checkpoint`) over a
 * tenant's chain head `{tenant, last_id, hash, iat}`; checking one needs only the public JWK (printed
 * at start, `GET /api/audit/checkpoint-key`), never a key read from the database.
 * @module
 */
import { createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, CompactSign, compactVerify, importJWK, type JWK } from 'jose';
import type { ChainVerdict, SignedHead } from './chain.ts';

export const CHECKPOINT_ALG = 'Ed25519';
export const CHECKPOINT_TYP = 'airlock-audit-checkpoint';
const HKDF_INFO = 'airlock audit checkpoint';
/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** What a checkpoint signs: a tenant's chain head. */
export interface CheckpointClaims {
  tenant: string;
  last_id: string;
  hash: string;
  iat: number;
}

export interface CheckpointSigner {
  kid: string;
  /** The public half: `{kty: "OKP", crv: "Ed25519", x, kid, alg, use}`. */
  publicJwk: JWK;
  sign(head: Omit<CheckpointClaims, 'iat'>, at?: Date): Promise<string>;
}

/** The key of a KEK secret (the same secret gives the same key, on every replica and in the CLI). */
export async function checkpointSigner(kekSecret: string): Promise<CheckpointSigner> {
  const seed = Buffer.from(hkdfSync('sha256', kekSecret, 'airlock', HKDF_INFO, 32));
  const privateKey: KeyObject = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const { kty, crv, x } = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint({ kty, crv, x });
  const publicJwk: JWK = { kty, crv, x, kid, alg: CHECKPOINT_ALG, use: 'sig' };
  return {
    kid,
    publicJwk,
    async sign(head, at = new Date()) {
      const claims: CheckpointClaims = { tenant: head.tenant, last_id: head.last_id, hash: head.hash, iat: Math.floor(at.getTime() / 1000) };
      return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
        .setProtectedHeader({ alg: CHECKPOINT_ALG, kid, typ: CHECKPOINT_TYP })
        .sign(privateKey);
    },
  };
}

/** A checkpoint key given to a checker: a JWK, or a JWK Set holding it (its first key). */
export function checkpointKeyOf(value: unknown): JWK {
  const jwk = (value as { keys?: JWK[] })?.keys?.[0] ?? (value as JWK);
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 public JWK (GET /api/audit/checkpoint-key gives it)');
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
}

/** The claims of a checkpoint signed by `publicJwk`; null when it is not (never throws). */
export async function verifyCheckpoint(jws: string, publicJwk: JWK): Promise<CheckpointClaims | null> {
  try {
    const key = await importJWK({ ...checkpointKeyOf(publicJwk), alg: CHECKPOINT_ALG }, CHECKPOINT_ALG);
    const { payload, protectedHeader } = await compactVerify(jws, key, { algorithms: [CHECKPOINT_ALG] });
    if (protectedHeader.typ !== CHECKPOINT_TYP) return null;
    const claims = JSON.parse(new TextDecoder().decode(payload)) as CheckpointClaims;
    if (typeof claims.tenant !== 'string' || typeof claims.last_id !== 'string' || typeof claims.hash !== 'string') return null;
    return claims;
  } catch {
    return null;
  }
}

/** A checkpoint as stored or exported: its id, the columns that index it, its JWS. */
export interface StoredCheckpoint {
  id: string;
  tenant: string;
  last_id: string;
  jws: string;
}

/** There are signed heads to check and no key to check them with (`--checkpoint-key FILE`, or the KEK). */
export class NoCheckpointKeyError extends Error {
  override readonly name = 'NoCheckpointKeyError';
}

/**
 * The signed heads of stored checkpoints, each as its signature says, checked against `key` only
 * (never a key read from where the checkpoints came from). A checkpoint the key did not sign is
 * tampering, named by the row it claims to sign.
 */
export async function signedHeadsOf(checkpoints: readonly StoredCheckpoint[], key: JWK | null): Promise<{ heads: SignedHead[] } | { failed: ChainVerdict }> {
  if (checkpoints.length === 0) return { heads: [] };
  if (!key) throw new NoCheckpointKeyError(`${checkpoints.length} signed audit heads need the checkpoint key: give --checkpoint-key FILE (GET /api/audit/checkpoint-key), or KEY_ENCRYPTION_KEY / the DATA_DIR holding key-encryption.key`);
  const heads: SignedHead[] = [];
  for (const c of checkpoints) {
    const claims = await verifyCheckpoint(c.jws, key);
    if (!claims) return { failed: { ok: false, id: c.last_id, what: `signed head ${c.id}: not signed by the checkpoint key` } };
    heads.push({ id: c.id, tenant: claims.tenant, last_id: claims.last_id, hash: claims.hash });
  }
  return { heads };
}
