/**
 * The one Session of this tab, shared by the login page and the app shell (the app renders only
 * in the browser: `ssr = false`), so that a sign-in on the login page is not followed by a second
 * refresh when the shell mounts.
 * @module
 */
import { createApi } from './api.ts';
import { Session } from './session.svelte.ts';

let shared: Session | null = null;

export function browserSession(): Session {
  // The refresh call carries no bearer token: the httpOnly cookie is the credential.
  shared ??= new Session({ refresh: createApi({ token: () => null }).refresh });
  return shared;
}
