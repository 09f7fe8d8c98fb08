/**
 * Roles and permissions: one table, pure functions.
 * viewer = every `:read`; operator = viewer + maintenance:write, tasks:write; admin = operator +
 * deployments:write (and audit:read, approvals:decide).
 * @module
 */

export const USER_ROLES = ['viewer', 'operator', 'admin'] as const;
export type UserRole = (typeof USER_ROLES)[number];

export const PERMISSIONS = [
  'dashboards:read',
  'maintenance:read',
  'maintenance:write',
  'deployments:read',
  'deployments:write',
  'health:read',
  'environment:read',
  'tasks:read',
  'tasks:write',
  'audit:read',
  // Deciding another user's approval through the headless API (issue 11); the requester always may.
  'approvals:decide',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

const READ: Permission[] = PERMISSIONS.filter((p) => p.endsWith(':read') && p !== 'audit:read');

const ROLE_PERMISSIONS: Record<UserRole, ReadonlySet<Permission>> = {
  viewer: new Set(READ),
  operator: new Set([...READ, 'maintenance:write', 'tasks:write']),
  admin: new Set([...READ, 'maintenance:write', 'tasks:write', 'deployments:write', 'audit:read', 'approvals:decide']),
};

export function isUserRole(value: unknown): value is UserRole {
  return typeof value === 'string' && (USER_ROLES as readonly string[]).includes(value);
}

/** May a user with `role` do what `permission` names? Unknown roles may do nothing. */
export function roleAllows({ role, permission }: { role: string; permission: Permission }): boolean {
  return isUserRole(role) && ROLE_PERMISSIONS[role].has(permission);
}

/** Every permission of a role, in the order of PERMISSIONS. */
export function permissionsForRole(role: string): Permission[] {
  return PERMISSIONS.filter((permission) => roleAllows({ role, permission }));
}
