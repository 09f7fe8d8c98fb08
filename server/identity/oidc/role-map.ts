/**
 * OIDC_ROLE_MAP (issue 39): `admin=ops-admins;operator=oncall,sre;viewer=*`. A person gets the
 * highest role any of their groups maps to; `*` maps everyone; no match and no `*`: no role (the
 * sign-in is refused with a page in words). Without a map every new person is a viewer. Pure.
 * @module
 */
import { USER_ROLES, type UserRole } from '../../auth/index.ts';

export type RoleMap = ReadonlyArray<{ role: UserRole; groups: readonly string[] }>;

export class RoleMapError extends Error {
  override readonly name = 'RoleMapError';
}

export function parseRoleMap(text: string): RoleMap {
  return text
    .split(';')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [role, groups, extra] = part.split('=');
      if (extra !== undefined || !groups || !(USER_ROLES as readonly string[]).includes(role.trim())) {
        throw new RoleMapError(`OIDC_ROLE_MAP: "${part}" is not ROLE=group,group (ROLE one of ${USER_ROLES.join(', ')})`);
      }
      return { role: role.trim() as UserRole, groups: groups.split(',').map((g) => g.trim()).filter(Boolean) };
    });
}

/** The claim's groups as a list: an array of strings, or one string (comma-separated). */
export function groupsOf(claim: unknown): string[] {
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === 'string');
  return typeof claim === 'string' ? claim.split(',').map((g) => g.trim()).filter(Boolean) : [];
}

/** The highest role the groups map to, or null (refused). */
export function roleFor(map: RoleMap, groups: readonly string[]): UserRole | null {
  const held = new Set(groups);
  const matched = map.filter((entry) => entry.groups.some((g) => g === '*' || held.has(g))).map((entry) => USER_ROLES.indexOf(entry.role));
  return matched.length === 0 ? null : USER_ROLES[Math.max(...matched)];
}
