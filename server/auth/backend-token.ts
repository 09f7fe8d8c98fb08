/**
 * The two JWTs of seed 003's "Dual Identity RBAC", minted for an organization's own backend (an
 * `openapi` tool source with `identity: dual_jwt`, issue 41): per call, a service token ("the agent
 * is legitimate": `sub` = SERVICE_CLIENT_ID) and a user token ("this user may do this": who, their
 * role and tenant, the tool, and the approval that allowed the call). Both ES256 with Airlock's
 * signing key (checkable at `/api/auth/jwks.json`), `aud` = the source's audience, at most 60 s of
 * life, each its own `jti`. Their JOSE `typ`s tell them apart (they share `iss` and `aud`), and
 * neither is one of TOKEN_KINDS', so Airlock's own verifiers refuse both (verify.ts); an audience
 * of Airlock's (`airlock:`) or of an MCP token (`mcp:`) is refused here, whatever the tools file says.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { SIGNING_ALG, type KeyStore } from './keys.ts';

export const BACKEND_SERVICE_TYP = 'backend-service+jwt';
export const BACKEND_USER_TYP = 'backend-user+jwt';
/** The longest life either token may have: one call's worth. */
export const BACKEND_TOKEN_TTL_S = 60;

/** Why an audience may not be used for backend tokens, or null when it may. Pure. */
export function reservedAudience(audience: string): string | null {
  return /^(airlock|mcp):/i.test(audience.trim()) ? `the audience "${audience}" is reserved (airlock:… and mcp:… are Airlock's own)` : null;
}

export interface BackendTokenInput {
  issuer: string;
  audience: string;
  /** SERVICE_CLIENT_ID: the service token's subject. */
  clientId: string;
  user: { id: string; username: string; role: string | null; tenant: string };
  /** The tool being called, by its model-facing name. */
  tool: string;
  /** The approval that allowed this call, when one did. */
  approval?: { id: string; actionHash?: string };
}

/** Signs both tokens of one call; throws on a reserved audience (never a token Airlock accepts). */
export async function signBackendTokens(keys: KeyStore, input: BackendTokenInput): Promise<{ service: string; user: string }> {
  const refused = reservedAudience(input.audience);
  if (refused) throw new Error(refused);
  const { kid, key } = await keys.signingKey();
  const iat = Math.floor(Date.now() / 1000);
  const sign = (typ: string, subject: string, claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: SIGNING_ALG, kid, typ })
      .setIssuer(input.issuer)
      .setAudience(input.audience)
      .setSubject(subject)
      .setIssuedAt(iat)
      .setExpirationTime(iat + BACKEND_TOKEN_TTL_S)
      .setJti(randomUUID())
      .sign(key);
  const { user, approval } = input;
  const userClaims = {
    preferred_username: user.username,
    role: user.role,
    tenant: user.tenant,
    tool: input.tool,
    ...(approval ? { approval_id: approval.id, ...(approval.actionHash ? { action_hash: approval.actionHash } : {}) } : {}),
  };
  const [service, userToken] = await Promise.all([sign(BACKEND_SERVICE_TYP, input.clientId, {}), sign(BACKEND_USER_TYP, user.id, userClaims)]);
  return { service, user: userToken };
}
