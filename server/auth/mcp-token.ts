/**
 * Tokens for MCP tool servers (issue 30): the only credential Airlock ever gives a third-party tool
 * server, and only to a tools-file entry that opts in (`identity: "token"`). One is minted per call:
 * audience `mcp:<server>` (so it is good for that server alone), the user as `sub`, the tool in a
 * `tool` claim, at most 60 s of life, JOSE `typ: mcp+jwt`, signed with Airlock's own key so the
 * server can check it at `/api/auth/jwks.json`.
 *
 * It is useless against Airlock itself: our verifiers accept only the audiences and `typ`s of
 * TOKEN_KINDS (verify.ts), so a tool server cannot replay it, nor pass it on as the user.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { SIGNING_ALG, type KeyStore } from './keys.ts';

/** The JOSE `typ` header of an MCP token: never one of TOKEN_KINDS'. */
export const MCP_TOKEN_TYP = 'mcp+jwt';

/** The longest life an MCP token may have: a call's worth, not a session's. */
export const MCP_TOKEN_MAX_TTL_S = 60;

/** The audience of a token for the tools-file server `server`. */
export const mcpAudience = (server: string): string => `mcp:${server}`;

export interface McpTokenInput {
  issuer: string;
  /** The tools-file server name the call goes to. */
  server: string;
  /** The user the call runs for. */
  userId: string;
  /** The tool being called, as the server names it. */
  tool: string;
  /** Defaults to, and is capped at, MCP_TOKEN_MAX_TTL_S. */
  ttlS?: number;
}

/** Signs one MCP token with the key store's active key. */
export async function signMcpToken(keys: KeyStore, input: McpTokenInput): Promise<string> {
  const { kid, key } = await keys.signingKey();
  const iat = Math.floor(Date.now() / 1000);
  const asked = input.ttlS !== undefined && Number.isFinite(input.ttlS) ? Math.floor(input.ttlS) : MCP_TOKEN_MAX_TTL_S;
  const ttlS = Math.max(1, Math.min(MCP_TOKEN_MAX_TTL_S, asked));
  return new SignJWT({ tool: input.tool })
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: MCP_TOKEN_TYP })
    .setIssuer(input.issuer)
    .setAudience(mcpAudience(input.server))
    .setSubject(input.userId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlS)
    .setJti(randomUUID())
    .sign(key);
}
