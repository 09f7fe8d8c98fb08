/**
 * Passkeys (issue 28 item 3, step-up), for the signed-in user (the settings page and the
 * approvals inbox use the browser session's token):
 *
 *   GET    /passkeys                          the caller's passkeys
 *   POST   /passkeys/options                  registration options (navigator.credentials.create)
 *   POST   /passkeys {response, name?}        the authenticator's answer: verified, stored (201)
 *   DELETE /passkeys/{id}                     removed (204)
 *   POST   /approvals/{id}/passkey-challenge  {nonce, options} for navigator.credentials.get, whose
 *                                             challenge is base64url(SHA-256(action_hash ‖ nonce));
 *          {arguments?}                       with an edit: the hash of the edited call (issue 36)
 *
 * The approve route then takes `passkey: {nonce, response}` (approvals-routes.ts). The ceremonies
 * are approvals/passkeys.ts's; the relying party is PUBLIC_URL's host, else the request's.
 * @module
 */
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { passkeyWire, registerPasskey, registrationOptions, relyingParty, removePasskey, stepUpOptions, type RelyingParty } from '../approvals/passkeys.ts';
import { listPasskeys } from '../db/passkeys.ts';
import { AirlockError } from '../errors.ts';
import type { V1Deps } from './deps.ts';
import { v1Caller } from './identity.ts';
import { ChallengeBody, IdParams, parseWith, PasskeyRegistration } from './schemas.ts';

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v?.split(',')[0]?.trim());

/** The relying party of this request (behind nginx: its Host and X-Forwarded-Proto). */
export function requestRelyingParty(publicUrl: string | undefined, request: FastifyRequest): RelyingParty {
  return relyingParty(publicUrl, { host: first(request.headers['x-forwarded-host']) ?? request.headers.host, proto: first(request.headers['x-forwarded-proto']) ?? request.protocol });
}

/** A passkey is a person's: a service acting on a user's behalf has none. */
function person(request: FastifyRequest) {
  const caller = v1Caller(request);
  if (caller.serviceClientId) throw new AirlockError('FORBIDDEN', 'Passkeys belong to people: sign in as the user.');
  return caller;
}

export const passkeyRoutes: FastifyPluginAsync<V1Deps> = async (app, deps) => {
  const rp = (request: FastifyRequest) => requestRelyingParty(deps.publicUrl, request);

  app.get('/passkeys', async (request) => ({ passkeys: (await listPasskeys(deps.pool, person(request).userId)).map(passkeyWire) }));

  app.post('/passkeys/options', async (request) => registrationOptions(deps.pool, person(request), rp(request)));

  app.post('/passkeys', async (request, reply) => {
    const caller = person(request);
    const body = parseWith(PasskeyRegistration, request.body);
    const stored = await registerPasskey(deps.pool, caller, rp(request), { response: body.response as RegistrationResponseJSON, name: body.name ?? 'Passkey' });
    return reply.code(201).send(passkeyWire(stored));
  });

  app.delete('/passkeys/:id', async (request, reply) => {
    const { id } = parseWith(IdParams, request.params);
    await removePasskey(deps.pool, person(request), id);
    return reply.code(204).send();
  });

  app.post('/approvals/:id/passkey-challenge', async (request) => {
    const caller = person(request);
    const { id } = parseWith(IdParams, request.params);
    // With `arguments`: the challenge of that edit's action hash (an approve with the same arguments verifies it).
    const body = parseWith(ChallengeBody, request.body ?? {});
    const target = await deps.approvals.stepUpTarget(caller, id, body.arguments ?? null);
    return stepUpOptions(deps.pool, caller, target, rp(request));
  });
};
