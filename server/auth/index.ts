/**
 * Identity: signing keys + JWKS, user and service tokens (and per-call MCP tokens), verification,
 * passwords, RBAC, login throttling, demo users. Imports nothing of ours but config; errors are
 * AuthError, which `api` and `chat` map to the taxonomy.
 * @module
 */
export { AuthError, authErrorDetails, isAuthError, type AuthErrorCode } from './errors.ts';
export { bearerToken } from './bearer.ts';
export type { AuthDb, AuthPool } from './db.ts';
export { createKeyStore, keyStoreFor, sealPlaintextKeys, SIGNING_ALG, type KeyStore, type SigningKey } from './keys.ts';
export { createKeyCipher, isSealed, kekSecret, keyCipherFor, KeyCipherError, type KeyCipher, type SealedJwk } from './key-cipher.ts';
export { signUserToken, signServiceToken, TOKEN_KINDS, type TokenKind, type IssuedToken } from './tokens.ts';
export { signMcpToken, mcpAudience, MCP_TOKEN_TYP, MCP_TOKEN_MAX_TTL_S, type McpTokenInput } from './mcp-token.ts';
export {
  createUserTokenVerifier,
  createServiceTokenVerifier,
  verifyToken,
  CLOCK_SKEW_S,
  type VerifiedUser,
  type VerifiedService,
} from './verify.ts';
export { revokeToken, isTokenRevoked } from './revocation.ts';
export { issueRefreshToken, rotateRefreshToken, revokeRefreshToken, parseRefreshToken, type IssuedRefresh, type RefreshedSession } from './refresh.ts';
export { hashPassword, verifyPassword } from './password.ts';
export { roleAllows, permissionsForRole, isUserRole, USER_ROLES, PERMISSIONS, type UserRole, type Permission } from './rbac.ts';
export { authenticateUser, checkClientCredentials } from './login.ts';
export { lockSecondsAfter, throttleKey, throttleRules, FREE_FAILURES, MAX_LOCK_S } from './throttle.ts';
export { getUserById, type User } from './users.ts';
export { ensureDemoUsers, DEMO_USERS, type DemoUsersResult } from './demo-users.ts';
export { signBackendTokens, reservedAudience, BACKEND_SERVICE_TYP, BACKEND_USER_TYP, BACKEND_TOKEN_TTL_S, type BackendTokenInput } from './backend-token.ts';
