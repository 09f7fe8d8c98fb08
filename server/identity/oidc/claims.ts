/**
 * From an ID token's claims to the person Airlock signs in (issue 39): username candidates in
 * OIDC_USERNAME_CLAIM's order, display name from `name`, email, and with OIDC_ROLE_MAP the role
 * of their groups (none: refused, `unmapped`), with OIDC_TENANT_CLAIM their tenant, lowercased
 * (one that does not fit a tenant name: refused, `tenant`). Pure.
 * @module
 */
import type { Config } from '../../config.ts';
import { SsoError } from './flow.ts';
import type { Person } from './people.ts';
import { groupsOf, parseRoleMap, roleFor } from './role-map.ts';

const TENANT = /^[a-z0-9][a-z0-9._-]{0,63}$/;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);

export function personOf(settings: Config['oidc'], claims: Record<string, unknown> & { iss: string; sub: string }, source: Person['source'] = 'oidc'): Person {
  const person: Person = {
    issuer: claims.iss,
    subject: claims.sub,
    source,
    usernameCandidates: settings.usernameClaims.map((c) => text(claims[c])).filter((v): v is string => v !== null),
    email: text(claims.email),
    displayName: text(claims.name),
  };
  if (settings.roleMap) {
    const role = roleFor(parseRoleMap(settings.roleMap), groupsOf(claims[settings.roleClaim]));
    if (!role) throw new SsoError('unmapped', `None of your groups (${settings.roleClaim}) gives a role in Airlock. Ask an administrator to add one of your groups to OIDC_ROLE_MAP.`);
    person.role = role;
  }
  if (settings.tenantClaim) {
    const tenant = text(claims[settings.tenantClaim])?.toLowerCase();
    if (!tenant || !TENANT.test(tenant)) throw new SsoError('tenant', `Your ${settings.tenantClaim} claim does not name a tenant Airlock can use.`);
    person.tenant = tenant;
  }
  return person;
}
