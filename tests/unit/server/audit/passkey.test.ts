/**
 * The approver's own signature (issue 28 step-up), the pure parts: the challenge derived from an
 * action hash and a nonce, the offline check of a proof (a software authenticator signs as a real
 * one does), the COSE key as a JWK, the relying party, and the decision step's rule.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { passkeyChallenge, passkeyProofIssue, type PasskeyProof } from '../../../../server/audit/passkey.ts';
import { jwkOf, relyingParty } from '../../../../server/approvals/passkeys.ts';
import { stepUpProof } from '../../../../server/approvals/decide.ts';
import { SoftAuthenticator } from '../../../helpers/soft-authenticator.ts';

const HASH = 'a'.repeat(64);
const NONCE = 'n0nce';

function proofOf(auth: SoftAuthenticator, challenge = passkeyChallenge(HASH, NONCE)): PasskeyProof {
  const r = auth.assert({ rpId: 'localhost', challenge }).response;
  return { credential_id: auth.credentialId, public_key_jwk: auth.publicKey.export({ format: 'jwk' }), authenticator_data: r.authenticatorData, client_data_json: r.clientDataJSON, signature: r.signature, nonce: NONCE };
}

describe('passkeyChallenge', () => {
  it('is base64url(SHA-256(action_hash ‖ nonce)), and changes with either', () => {
    expect(passkeyChallenge(HASH, NONCE)).toBe(createHash('sha256').update(HASH + NONCE).digest('base64url'));
    expect(passkeyChallenge(HASH, 'other')).not.toBe(passkeyChallenge(HASH, NONCE));
    expect(passkeyChallenge('b'.repeat(64), NONCE)).not.toBe(passkeyChallenge(HASH, NONCE));
  });
});

describe('passkeyProofIssue', () => {
  const auth = new SoftAuthenticator('http://localhost');
  it('accepts a signature over the action hash with its nonce', () => {
    expect(passkeyProofIssue(proofOf(auth), HASH)).toBeNull();
  });
  it('refuses another action, another nonce, a flipped signature bit, another key, a truncated authenticatorData', () => {
    const proof = proofOf(auth);
    expect(passkeyProofIssue(proof, 'b'.repeat(64))).toMatch(/challenge is not this action hash/);
    expect(passkeyProofIssue({ ...proof, nonce: 'x' }, HASH)).toMatch(/challenge is not this action hash/);
    const sig = Buffer.from(proof.signature, 'base64url');
    sig[sig.length - 1] ^= 1;
    expect(passkeyProofIssue({ ...proof, signature: sig.toString('base64url') }, HASH)).toMatch(/does not verify|malformed/);
    expect(passkeyProofIssue({ ...proof, public_key_jwk: new SoftAuthenticator('http://localhost').publicKey.export({ format: 'jwk' }) }, HASH)).toBe('the signature does not verify with the passkey');
    expect(passkeyProofIssue({ ...proof, authenticator_data: Buffer.alloc(10).toString('base64url') }, HASH)).toBe('authenticatorData is truncated');
  });
  it('refuses a registration answer (webauthn.create) and an authenticator that did not verify the user', () => {
    const proof = proofOf(auth);
    const create = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(proof.client_data_json, 'base64url').toString()), type: 'webauthn.create' })).toString('base64url');
    expect(passkeyProofIssue({ ...proof, client_data_json: create }, HASH)).toMatch(/not webauthn.get/);
    const data = Buffer.from(proof.authenticator_data, 'base64url');
    data[32] = 0x01; // present, not verified
    expect(passkeyProofIssue({ ...proof, authenticator_data: data.toString('base64url') }, HASH)).toBe('the authenticator did not verify the user');
  });
});

describe('jwkOf', () => {
  it('turns a COSE EC2 P-256 key into the JWK the receipt carries', () => {
    const auth = new SoftAuthenticator('http://localhost');
    const jwk = auth.publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(new Map<number, number | Uint8Array>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
    expect(jwkOf(cose)).toEqual({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y });
  });
});

describe('relyingParty', () => {
  it("is PUBLIC_URL's host when set, else the request's", () => {
    expect(relyingParty('https://airlock.example.com/base', { host: 'localhost:8080', proto: 'http' })).toEqual({ rpID: 'airlock.example.com', origin: 'https://airlock.example.com' });
    expect(relyingParty(undefined, { host: 'localhost:8080', proto: 'http' })).toEqual({ rpID: 'localhost', origin: 'http://localhost:8080' });
  });
});

describe('stepUpProof', () => {
  const proof = proofOf(new SoftAuthenticator('http://localhost'));
  const stepUp = { stepUp: 'passkey' as const, actionHash: HASH };
  it('a step-up approve needs a proof over the approval\'s current hash', () => {
    expect(() => stepUpProof(stepUp, 'approve', { method: 'POST', path: '/chat' })).toThrow(expect.objectContaining({ code: 'STEP_UP_REQUIRED', status: 403 }));
    expect(() => stepUpProof(stepUp, 'approve', { method: 'POST', path: '/x', passkey: { actionHash: 'b'.repeat(64), proof } })).toThrow(expect.objectContaining({ code: 'STEP_UP_REQUIRED' }));
    expect(stepUpProof(stepUp, 'approve', { method: 'POST', path: '/x', passkey: { actionHash: HASH, proof } })).toBe(proof);
  });
  it('an edited step-up approval needs the proof over its final action hash, not the proposed one (issue 36)', () => {
    const edited = { ...stepUp, finalActionHash: 'c'.repeat(64) };
    expect(() => stepUpProof(edited, 'approve', { method: 'POST', path: '/x', passkey: { actionHash: HASH, proof } })).toThrow(expect.objectContaining({ code: 'STEP_UP_REQUIRED', status: 403 }));
    expect(stepUpProof(edited, 'approve', { method: 'POST', path: '/x', passkey: { actionHash: 'c'.repeat(64), proof } })).toBe(proof);
  });
  it('a deny, or an approval without step-up, needs none', () => {
    expect(stepUpProof(stepUp, 'deny', undefined)).toBeNull();
    expect(stepUpProof({ stepUp: null, actionHash: HASH }, 'approve', undefined)).toBeNull();
  });
});
