/**
 * Passkey step-up (issue 28 item 3): the WebAuthn ceremonies, with @simplewebauthn/server.
 *
 * - Registration (the settings page): options with a fresh challenge, then the authenticator's
 *   answer verified and its credential stored. ES256 only: a receipt carries the key as a P-256 JWK
 *   that anyone can check (audit/passkey.ts).
 * - Step-up (an approval whose rule says `step_up: "passkey"`): a nonce issued for this approver
 *   and approval, the challenge derived from the approval's action hash and that nonce; the
 *   assertion verified against it, the nonce used up either way. What comes out is the proof the
 *   decision step records and the receipt carries.
 *
 * Every challenge is in the database (db/passkeys.ts), single use and short-lived, so any replica
 * verifies what another issued. The relying party is PUBLIC_URL's host, else the request's.
 * @module
 */
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { passkeyChallenge, type PasskeyProof } from '../audit/passkey.ts';
import { deletePasskey, getPasskey, insertChallenge, insertPasskey, listPasskeys, takeChallenge, touchPasskey, type PasskeyCredential } from '../db/passkeys.ts';
import type { Pool } from '../db/index.ts';
import { AirlockError } from '../errors.ts';

/** How long a ceremony's challenge may be used (the browser's own timeout is the same). */
export const CHALLENGE_TTL_MS = 120_000;
const ES256 = -7;
const RP_NAME = 'Airlock';

/** The relying party a ceremony runs for. */
export interface RelyingParty {
  rpID: string;
  origin: string;
}

/**
 * Pure: the relying party of a request: PUBLIC_URL's host and origin when it is set, else the
 * request's own (Host, and the proxy's X-Forwarded-Proto or the connection's protocol).
 */
export function relyingParty(publicUrl: string | undefined, request: { host: string | undefined; proto: string }): RelyingParty {
  const url = new URL(publicUrl ?? `${request.proto}://${request.host ?? 'localhost'}`);
  return { rpID: url.hostname, origin: url.origin };
}

export interface PasskeyUser {
  userId: string;
  username: string;
}

/** A passkey as the settings page lists it. */
export const passkeyWire = (c: PasskeyCredential) => ({ id: c.id, name: c.name, created_at: c.createdAt.toISOString(), last_used_at: c.lastUsedAt?.toISOString() ?? null });

const issue = async (pool: Pool, user: PasskeyUser, approvalId: string | null, challenge: string, nonce: string) =>
  insertChallenge(pool, { nonce, userId: user.userId, approvalId, challenge, expiresAt: new Date(Date.now() + CHALLENGE_TTL_MS) });

/** Registration, step 1: the options for navigator.credentials.create (its challenge is the nonce). */
export async function registrationOptions(pool: Pool, user: PasskeyUser, rp: RelyingParty): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = await listPasskeys(pool, user.userId);
  const options = await generateRegistrationOptions({
    rpName: RP_NAME,
    rpID: rp.rpID,
    userName: user.username,
    userID: new TextEncoder().encode(user.userId),
    attestationType: 'none',
    excludeCredentials: existing.map((c) => ({ id: c.id, transports: c.transports })),
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'required' },
    supportedAlgorithmIDs: [ES256],
    timeout: CHALLENGE_TTL_MS,
  });
  await issue(pool, user, null, options.challenge, options.challenge);
  return options;
}

/** Registration, step 2: verifies the authenticator's answer to our challenge and stores the passkey. */
export async function registerPasskey(pool: Pool, user: PasskeyUser, rp: RelyingParty, input: { response: RegistrationResponseJSON; name: string }): Promise<PasskeyCredential> {
  const challenge = challengeOf(input.response.response.clientDataJSON);
  const taken = challenge ? await takeChallenge(pool, { nonce: challenge, userId: user.userId, approvalId: null, now: new Date() }) : null;
  if (!taken) throw new AirlockError('VALIDATION_ERROR', 'This registration was not asked for, or it took too long: start again.');
  const verified = await verifyRegistrationResponse({
    response: input.response, expectedChallenge: taken.challenge, expectedOrigin: rp.origin, expectedRPID: rp.rpID, requireUserVerification: true, supportedAlgorithmIDs: [ES256],
  }).catch((error: Error) => {
    throw new AirlockError('VALIDATION_ERROR', `The passkey was not accepted: ${error.message}`);
  });
  if (!verified.verified) throw new AirlockError('VALIDATION_ERROR', 'The passkey was not accepted.');
  const { credential } = verified.registrationInfo;
  return insertPasskey(pool, { id: credential.id, userId: user.userId, publicKey: credential.publicKey, counter: credential.counter, transports: credential.transports ?? [], name: input.name });
}

export async function removePasskey(pool: Pool, user: PasskeyUser, id: string): Promise<void> {
  if (!(await deletePasskey(pool, user.userId, id))) throw new AirlockError('NOT_FOUND', 'You have no such passkey.');
}

/** The challenge inside a clientDataJSON (base64url), or null when it is not one. */
function challengeOf(clientDataJSON: unknown): string | null {
  try {
    const parsed = JSON.parse(Buffer.from(String(clientDataJSON), 'base64url').toString('utf8')) as { challenge?: unknown };
    return typeof parsed.challenge === 'string' ? parsed.challenge : null;
  } catch {
    return null;
  }
}

const noPasskey = () => new AirlockError('STEP_UP_REQUIRED', 'This approval needs your passkey, and you have none registered: add one in Settings (/settings).');

/**
 * Step-up, step 1: a nonce for this approver and approval, and the options for
 * navigator.credentials.get whose challenge is base64url(SHA-256(action_hash ‖ nonce)).
 */
export async function stepUpOptions(pool: Pool, user: PasskeyUser, approval: { id: string; actionHash: string }, rp: RelyingParty): Promise<{ nonce: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const credentials = await listPasskeys(pool, user.userId);
  if (credentials.length === 0) throw noPasskey();
  const nonce = randomBytes(18).toString('base64url');
  const challenge = passkeyChallenge(approval.actionHash, nonce);
  const options = await generateAuthenticationOptions({
    rpID: rp.rpID,
    challenge: new Uint8Array(Buffer.from(challenge, 'base64url')),
    allowCredentials: credentials.map((c) => ({ id: c.id, transports: c.transports })),
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  });
  await issue(pool, user, approval.id, challenge, nonce);
  return { nonce, options };
}

/** What a decision request sends for a step-up: the nonce it was given and the browser's assertion. */
export interface StepUpAssertion {
  nonce: string;
  response: AuthenticationResponseJSON;
}

/**
 * Step-up, step 2: uses the nonce up, then verifies the assertion over the challenge of the
 * approval's action hash as it is now (an action changed since cannot pass) with the approver's
 * own registered passkey. Returns the proof for the decision and its receipt; refusals are 403
 * STEP_UP_REQUIRED saying why.
 */
export async function verifyStepUp(pool: Pool, user: PasskeyUser, approval: { id: string; actionHash: string }, rp: RelyingParty, assertion: StepUpAssertion): Promise<PasskeyProof> {
  const refuse = (why: string) => new AirlockError('STEP_UP_REQUIRED', `The passkey signature was not accepted: ${why}. Confirm again to sign anew.`);
  const taken = await takeChallenge(pool, { nonce: assertion.nonce, userId: user.userId, approvalId: approval.id, now: new Date() });
  if (!taken) throw refuse('its nonce is unknown, used already or expired');
  const expected = passkeyChallenge(approval.actionHash, assertion.nonce);
  if (taken.challenge !== expected) throw refuse('the action changed since it was signed');
  const credential = await getPasskey(pool, user.userId, assertion.response.id);
  if (!credential) throw refuse('that passkey is not one of yours');
  const verified = await verifyAuthenticationResponse({
    response: assertion.response,
    expectedChallenge: expected,
    expectedOrigin: rp.origin,
    expectedRPID: rp.rpID,
    credential: { id: credential.id, publicKey: new Uint8Array(credential.publicKey), counter: credential.counter, transports: credential.transports },
    requireUserVerification: true,
  }).catch((error: Error) => {
    throw refuse(error.message);
  });
  if (!verified.verified) throw refuse('the signature does not verify');
  await touchPasskey(pool, credential.id, verified.authenticationInfo.newCounter, new Date());
  const r = assertion.response.response;
  return { credential_id: credential.id, public_key_jwk: jwkOf(credential.publicKey), authenticator_data: r.authenticatorData, client_data_json: r.clientDataJSON, signature: r.signature, nonce: assertion.nonce };
}

/** Pure: a COSE EC2 P-256 public key as a JWK (registration admits ES256 only). */
export function jwkOf(publicKey: Uint8Array): PasskeyProof['public_key_jwk'] {
  const key = decodeCredentialPublicKey(new Uint8Array(publicKey));
  if (!cose.isCOSEPublicKeyEC2(key)) throw new AirlockError('INTERNAL', 'A stored passkey is not an EC2 key.');
  const x = key.get(cose.COSEKEYS.x);
  const y = key.get(cose.COSEKEYS.y);
  if (!x || !y) throw new AirlockError('INTERNAL', 'A stored passkey is not an EC2 key.');
  return { kty: 'EC', crv: 'P-256', x: Buffer.from(x).toString('base64url'), y: Buffer.from(y).toString('base64url') };
}
