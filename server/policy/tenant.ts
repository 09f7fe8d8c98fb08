/**
 * A user's tenant, read from `users.tenant` (migration 110; demo users are `demo`). The only place
 * the policy reads identity from the database, so a later identity module can replace it.
 * @module
 */
import { createVerifiedCache } from '../auth/verified-cache.ts';
import type { Queryable } from '../db/index.ts';

export const DEFAULT_TENANT = 'demo';

/** The tenant of a user id; the default tenant for an unknown id. */
export async function tenantOfUser(q: Queryable, userId: string): Promise<string> {
  if (!/^[0-9a-f-]{36}$/i.test(userId)) return DEFAULT_TENANT;
  const { rows } = await q.query<{ tenant: string }>('SELECT tenant FROM users WHERE id = $1', [userId]);
  return rows[0]?.tenant ?? DEFAULT_TENANT;
}

/**
 * `tenantOfUser` remembered for `ttlS` seconds per user: every run asks, and the answer sits on the
 * path to the first token. A tenant move takes effect within `ttlS` (0: read every time).
 */
export function cachedTenantLookup(q: Queryable, ttlS = 10): (userId: string) => Promise<string> {
  if (ttlS <= 0) return (userId) => tenantOfUser(q, userId);
  const cache = createVerifiedCache<string>(10_000);
  return async (userId) => {
    const known = cache.get(userId);
    if (known !== undefined) return known;
    const tenant = await tenantOfUser(q, userId);
    cache.set(userId, tenant, Date.now() / 1000 + ttlS);
    return tenant;
  };
}
