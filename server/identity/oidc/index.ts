/**
 * Single sign-on with an OpenID provider (issue 39): discovery (provider.ts), the code flow
 * (flow.ts), claims to person (claims.ts, role-map.ts) and the just-in-time user (people.ts).
 * @module
 */
export { createOidcProvider, type OidcProvider, type OidcStatus } from './provider.ts';
export { startSignIn, finishSignIn, safeNext, SsoError, FLOW_COOKIE, FLOW_COOKIE_PATH, FLOW_TTL_S, type SsoFailure } from './flow.ts';
export { personOf } from './claims.ts';
export { signInPerson, baseUsername, numbered, type Person, type SignedInUser } from './people.ts';
export { parseRoleMap, roleFor, groupsOf, RoleMapError } from './role-map.ts';
