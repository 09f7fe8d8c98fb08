/**
 * User management (issue 39): one set of rules for the three doors (`./airlock users …`,
 * `GET/PATCH /api/admin/users`, the /settings/users page). Each change runs in one transaction
 * with its audit row, appended to the target user's tenant chain and naming who made it (an
 * admin, or `cli` with no user id). Refused changes are 409 CONFLICT: a role that comes from the
 * provider's groups, disabling yourself, demoting or disabling the last enabled admin.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { hashPassword, isUserRole, USER_ROLES, type UserRole } from '../auth/index.ts';
import { insertAudit } from '../db/audit.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/index.ts';
import { AirlockError } from '../errors.ts';
import { insertLocalUser, listManagedUsers, lockUser, otherEnabledAdmins, revokeHoldings, updateUser, type ManagedUser } from './store.ts';

/** Who makes a change: a signed-in admin, or the command line on the server's machine. */
export type Actor = { kind: 'user'; userId: string; username: string; role: UserRole } | { kind: 'cli' };

export const CLI_ACTOR: Actor = { kind: 'cli' };

/** The username rule of migration 200 (the claim lowercased must fit it). */
export const USERNAME = /^[a-z0-9][a-z0-9._@-]{0,63}$/;

/** A password printed once: 120 random bits, in characters a terminal copies whole. */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

function conflict(message: string, reason: string): AirlockError {
  return new AirlockError('CONFLICT', message, { details: { reason } });
}

export function parseRole(value: string): UserRole {
  if (!isUserRole(value)) throw new AirlockError('VALIDATION_ERROR', `Unknown role "${value}": one of ${USER_ROLES.join(', ')}.`, { details: { role: value } });
  return value;
}

export function checkPassword(password: string): string {
  if (password.length < 8 || password.length > 1024) throw new AirlockError('VALIDATION_ERROR', 'A password has 8 to 1024 characters.');
  return password;
}

async function audit(db: PoolClient, actor: Actor, operation: string, target: ManagedUser, args: Record<string, unknown>, method: string): Promise<void> {
  await insertAudit(db, {
    serviceActor: actor.kind === 'cli' ? 'cli' : null,
    userId: actor.kind === 'user' ? actor.userId : null,
    username: actor.kind === 'user' ? actor.username : 'cli',
    userRole: actor.kind === 'user' ? actor.role : null,
    operation,
    method,
    path: actor.kind === 'cli' ? 'cli:users' : `/api/admin/users/${target.id}`,
    // Issuer and subject ride in the hashed arguments (the chain's columns are fixed).
    arguments: {
      user_id: target.id,
      target_username: target.username,
      ...(target.issuer ? { issuer: target.issuer, subject: target.subject } : {}),
      ...(target.display_name ? { display_name: target.display_name } : {}),
      ...args,
    },
    outcome: 'success',
    statusCode: 200,
    errorCode: null,
    toolCallId: null,
    conversationId: null,
    durationMs: null,
    tenant: target.tenant,
  });
}

export async function listUsers(pool: Pool): Promise<ManagedUser[]> {
  return listManagedUsers(pool);
}

/** A local user with a password (given, or generated and returned to be shown once). */
export async function addUser(pool: Pool, actor: Actor, input: { username: string; role: string; password?: string; tenant?: string }): Promise<{ user: ManagedUser; generatedPassword?: string }> {
  const username = input.username.trim().toLowerCase();
  if (!USERNAME.test(username)) throw new AirlockError('VALIDATION_ERROR', `"${input.username}" is not a username: lower-case letters, digits and . _ @ -, at most 64, starting with a letter or digit.`);
  const role = parseRole(input.role);
  const generated = input.password === undefined ? generatePassword() : undefined;
  const passwordHash = await hashPassword(checkPassword(input.password ?? generated!));
  return withTransaction(pool, async (db) => {
    const user = await insertLocalUser(db, { username, role, passwordHash, tenant: input.tenant });
    // Usernames are never reused (an SSO person's included): a held name is a conflict, not an update.
    if (!user) throw conflict(`A user named ${username} already exists.`, 'username_taken');
    await audit(db, actor, 'users.add', user, { role }, actor.kind === 'cli' ? 'CLI' : 'POST');
    return { user, ...(generated ? { generatedPassword: generated } : {}) };
  });
}

type Ref = { id?: string; username?: string };

async function locked(db: PoolClient, ref: Ref): Promise<ManagedUser> {
  const user = await lockUser(db, ref);
  if (!user) throw new AirlockError('NOT_FOUND', `No user ${ref.username ?? ref.id}.`);
  return user;
}

/** Refuses leaving no enabled admin (the last one demoted or disabled). */
async function keepAnAdmin(db: PoolClient, user: ManagedUser): Promise<void> {
  if (user.role === 'admin' && !user.disabled_at && (await otherEnabledAdmins(db, user.id)) === 0) {
    throw conflict(`${user.username} is the last enabled admin.`, 'last_admin');
  }
}

export async function setRole(pool: Pool, actor: Actor, ref: Ref, roleName: string): Promise<ManagedUser> {
  const role = parseRole(roleName);
  return withTransaction(pool, async (db) => {
    const user = await locked(db, ref);
    if (user.role_from_claims) throw conflict(`${user.username}'s role comes from the identity provider's groups (OIDC_ROLE_MAP): change it there.`, 'role_from_claims');
    if (user.role === role) return user;
    if (role !== 'admin') await keepAnAdmin(db, user);
    const updated = await updateUser(db, user.id, { role });
    await audit(db, actor, 'users.set_role', updated, { role, previous_role: user.role }, actor.kind === 'cli' ? 'CLI' : 'PATCH');
    return updated;
  });
}

/**
 * Disable: every token the person holds is refused from their next request (the token check reads
 * disabled_at), and their sessions, grants and open decision links end here. Enable restores
 * sign-in only: what was revoked stays revoked.
 */
export async function setDisabled(pool: Pool, actor: Actor, ref: Ref, disabled: boolean): Promise<ManagedUser> {
  return withTransaction(pool, async (db) => {
    const user = await locked(db, ref);
    if (Boolean(user.disabled_at) === disabled) return user;
    if (disabled && actor.kind === 'user' && actor.userId === user.id) throw conflict('You cannot disable yourself.', 'self');
    if (disabled) await keepAnAdmin(db, user);
    const updated = await updateUser(db, user.id, { disabled });
    const revoked = disabled ? await revokeHoldings(db, user.id) : undefined;
    await audit(db, actor, disabled ? 'users.disable' : 'users.enable', updated, revoked ? { revoked } : {}, actor.kind === 'cli' ? 'CLI' : 'PATCH');
    return updated;
  });
}

/** A new generated password for a local user (shown once); their browser sessions end. */
export async function resetPassword(pool: Pool, actor: Actor, ref: Ref): Promise<{ user: ManagedUser; password: string }> {
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  return withTransaction(pool, async (db) => {
    const user = await locked(db, ref);
    if (user.source !== 'local') throw conflict(`${user.username} signs in with ${user.source === 'oidc' ? 'single sign-on' : 'the authenticating proxy'} and has no password here.`, 'not_local');
    const updated = await updateUser(db, user.id, { passwordHash });
    await db.query('UPDATE refresh_tokens SET revoked_at = now() WHERE user_id::text = $1 AND revoked_at IS NULL', [user.id]);
    await audit(db, actor, 'users.reset_password', updated, {}, actor.kind === 'cli' ? 'CLI' : 'POST');
    return { user: updated, password };
  });
}
