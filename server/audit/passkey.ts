/**
 * An approver's own signature (issue 28 item 3, step-up): what a passkey signs and how anyone
 * checks it without the server. Pure code over node:crypto.
 *
 * The WebAuthn challenge of an approval is base64url(SHA-256(action_hash ‖ nonce)): the UTF-8 bytes
 * of the action hash (hex) followed by those of the server-issued nonce. The authenticator signs
 * authenticatorData ‖ SHA-256(clientDataJSON), and clientDataJSON holds that challenge, so a valid
 * signature ties the human's key to exactly this action.
 * @module
 */
import { createHash, createPublicKey, verify, type JsonWebKey } from 'node:crypto';

/** The proof a receipt carries for one approver (all bytes base64url). */
export interface PasskeyProof {
  credential_id: string;
  /** The passkey's public key, ES256 (P-256). */
  public_key_jwk: JsonWebKey;
  authenticator_data: string;
  client_data_json: string;
  signature: string;
  /** The server-issued nonce the challenge was derived from (needed to derive it again). */
  nonce: string;
}

/** Pure: the WebAuthn challenge (base64url) for an action hash and a nonce. */
export function passkeyChallenge(actionHash: string, nonce: string): string {
  return createHash('sha256').update(Buffer.from(actionHash + nonce, 'utf8')).digest('base64url');
}

const FLAG_USER_PRESENT = 0x01;
const FLAG_USER_VERIFIED = 0x04;

/**
 * Checks one approver's proof against the action hash the receipt names: clientDataJSON is a
 * `webauthn.get` over the challenge derived from (actionHash, nonce), the authenticator saw the
 * user present and verified, and the signature verifies with the given key (ES256, DER). Null when
 * it holds, else what is wrong.
 */
export function passkeyProofIssue(proof: PasskeyProof, actionHash: string): string | null {
  try {
    const clientDataJson = Buffer.from(proof.client_data_json, 'base64url');
    const clientData = JSON.parse(clientDataJson.toString('utf8')) as { type?: string; challenge?: string };
    if (clientData.type !== 'webauthn.get') return `clientDataJSON type is ${String(clientData.type)}, not webauthn.get`;
    if (clientData.challenge !== passkeyChallenge(actionHash, proof.nonce)) return 'the signed challenge is not this action hash with its nonce';
    const authData = Buffer.from(proof.authenticator_data, 'base64url');
    if (authData.length < 37) return 'authenticatorData is truncated';
    const flags = authData[32];
    if (!(flags & FLAG_USER_PRESENT) || !(flags & FLAG_USER_VERIFIED)) return 'the authenticator did not verify the user';
    if (proof.public_key_jwk.kty !== 'EC' || proof.public_key_jwk.crv !== 'P-256') return 'the key is not an ES256 (P-256) key';
    const key = createPublicKey({ key: proof.public_key_jwk, format: 'jwk' });
    const signed = Buffer.concat([authData, createHash('sha256').update(clientDataJson).digest()]);
    const ok = verify('sha256', signed, { key, dsaEncoding: 'der' }, Buffer.from(proof.signature, 'base64url'));
    return ok ? null : 'the signature does not verify with the passkey';
  } catch (error) {
    return `malformed: ${(error as Error).message}`;
  }
}
