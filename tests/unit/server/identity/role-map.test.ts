import { describe, expect, it } from 'vitest';
import { groupsOf, parseRoleMap, roleFor } from '../../../../server/identity/oidc/role-map.ts';

describe('OIDC_ROLE_MAP', () => {
  const map = parseRoleMap('admin=ops-admins; operator=oncall,sre;viewer=*');

  it('gives the highest role any group maps to', () => {
    expect(roleFor(map, ['sre', 'ops-admins'])).toBe('admin');
    expect(roleFor(map, ['oncall'])).toBe('operator');
    expect(roleFor(map, ['marketing'])).toBe('viewer');
  });

  it('maps nobody without a match and without *', () => {
    expect(roleFor(parseRoleMap('admin=ops-admins'), ['sre'])).toBeNull();
    expect(roleFor(parseRoleMap('admin=ops-admins'), [])).toBeNull();
  });

  it('refuses a map it cannot read, naming the part', () => {
    expect(() => parseRoleMap('root=ops')).toThrow('OIDC_ROLE_MAP: "root=ops" is not ROLE=group,group');
    expect(() => parseRoleMap('admin')).toThrow(/"admin"/);
  });

  it('reads groups from an array or a comma-separated string', () => {
    expect(groupsOf(['a', 1, 'b'])).toEqual(['a', 'b']);
    expect(groupsOf('a, b')).toEqual(['a', 'b']);
    expect(groupsOf(undefined)).toEqual([]);
  });
});
