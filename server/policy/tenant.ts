/**
 * A user's tenant, read from `users.tenant` (migration 110; demo users are `demo`). The only place
 * the policy reads identity from the database, so a later identity module can replace it.
 * @module
 */
import type { Queryable } from '../db/index.ts';

export const DEFAULT_TENANT = 'demo';

/** The tenant of a user id; the default tenant for an unknown id. */
export async function tenantOfUser(q: Queryable, userId: string): Promise<string> {
  if (!/^[0-9a-f-]{36}$/i.test(userId)) return DEFAULT_TENANT;
  const { rows } = await q.query<{ tenant: string }>('SELECT tenant FROM users WHERE id = $1', [userId]);
  return rows[0]?.tenant ?? DEFAULT_TENANT;
}
