/**
 * The browser's side of passkeys (issue 28 step-up), loaded on demand (the chat page's budget):
 * @simplewebauthn/browser runs navigator.credentials.create / .get on the options the server
 * issued (server/v1/passkeys-routes.ts), and the answers go back to it.
 * @module
 */
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';

/** The approvals API as the signed-in user (ApprovalInbox.call). */
export type ApiCall = <T>(method: string, path: string, body?: unknown) => Promise<T>;

const API = '/api/agent/v1';

export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

export async function listPasskeys(call: ApiCall): Promise<Passkey[]> {
  return (await call<{ passkeys: Passkey[] }>('GET', `${API}/passkeys`)).passkeys;
}

/** Registers a passkey of this device (the browser asks the user). */
export async function addPasskey(call: ApiCall, name: string): Promise<Passkey> {
  const { startRegistration } = await import('@simplewebauthn/browser');
  const optionsJSON = await call<PublicKeyCredentialCreationOptionsJSON>('POST', `${API}/passkeys/options`, {});
  const response = await startRegistration({ optionsJSON });
  return call<Passkey>('POST', `${API}/passkeys`, { name, response });
}

export async function removePasskey(call: ApiCall, id: string): Promise<void> {
  await call('DELETE', `${API}/passkeys/${encodeURIComponent(id)}`);
}

/**
 * Signs an approval: a nonce from the server, then navigator.credentials.get over
 * base64url(SHA-256(action_hash ‖ nonce)) (the server derived it). The approve body's `passkey`.
 */
export async function signApproval(call: ApiCall, approvalId: string): Promise<{ nonce: string; response: AuthenticationResponseJSON }> {
  const { nonce, options } = await call<{ nonce: string; options: PublicKeyCredentialRequestOptionsJSON }>('POST', `${API}/approvals/${encodeURIComponent(approvalId)}/passkey-challenge`, {});
  const { startAuthentication } = await import('@simplewebauthn/browser');
  return { nonce, response: await startAuthentication({ optionsJSON: options }) };
}
