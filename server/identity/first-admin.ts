/**
 * A production start nobody could sign in to (issue 39): DATABASE_URL, no demo users, no single
 * sign-on and no user yet. The start says, in one line, the command that creates the first admin.
 * @module
 */
import type { Queryable } from '../db/index.ts';
import { countUsers } from './store.ts';

export const FIRST_ADMIN_LINE = 'No users yet: create the first admin with ./airlock users add NAME --role admin --password-stdin';

/** The line to print at this start, or null when someone can already sign in (or will, by SSO). */
export async function firstAdminLine(db: Queryable, config: { databaseUrl?: string; demoUsers: boolean; oidcIssuer?: string }): Promise<string | null> {
  if (!config.databaseUrl || config.demoUsers || config.oidcIssuer) return null;
  return (await countUsers(db)) === 0 ? FIRST_ADMIN_LINE : null;
}
