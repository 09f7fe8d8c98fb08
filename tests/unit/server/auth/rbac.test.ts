import { describe, expect, it } from 'vitest';
import { PERMISSIONS, permissionsForRole, roleAllows } from '../../../../server/auth/rbac.ts';

// role -> permissions it must have; everything else is refused.
const TABLE: Record<string, string[]> = {
  viewer: ['dashboards:read', 'maintenance:read', 'deployments:read', 'health:read', 'environment:read', 'tasks:read'],
  operator: ['dashboards:read', 'maintenance:read', 'maintenance:write', 'deployments:read', 'health:read', 'environment:read', 'tasks:read', 'tasks:write'],
  admin: [...PERMISSIONS],
  intruder: [],
  '': [],
};

describe('roleAllows', () => {
  for (const [role, allowed] of Object.entries(TABLE)) {
    for (const permission of PERMISSIONS) {
      const expected = allowed.includes(permission);
      it(`${role || '(empty)'} ${permission} -> ${expected}`, () => {
        expect(roleAllows({ role, permission })).toBe(expected);
      });
    }
  }

  it('permissionsForRole lists exactly the allowed ones', () => {
    for (const [role, allowed] of Object.entries(TABLE)) expect(permissionsForRole(role).sort()).toEqual([...allowed].sort());
  });

  it('refuses inherited object keys as roles', () => {
    expect(roleAllows({ role: 'constructor', permission: 'dashboards:read' })).toBe(false);
    expect(roleAllows({ role: '__proto__', permission: 'dashboards:read' })).toBe(false);
  });
});
