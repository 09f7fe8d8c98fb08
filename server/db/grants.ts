/**
 * Standing grants (issue 27 item 2; migration 162): create, list, revoke, and the one read a call
 * makes: the first live grant of the tool that covers the call (`grantCovers`: its match satisfied
 * and not empty unless the rule has `when`, made under the call's own deciding rule, migration 241),
 * its use counted in the same statement that checks it is still live (a revocation is seen by the
 * next call, on any replica).
 * @module
 */
import { canonicalJson } from '../canonical-json.ts';
import type { Queryable } from './pool.ts';

export interface Grant {
  id: string;
  tool: string;
  match: Record<string, unknown>;
  scope: 'user' | 'tenant';
  createdBy: string;
  scopeUser: string | null;
  /** The username of `scopeUser` (the Grants tab names whom a grant is for, issue 37 item 6). */
  scopeUserName?: string | null;
  scopeTenant: string | null;
  expiresAt: Date;
  revokedAt: Date | null;
  uses: number;
}

interface Row {
  id: string; tool: string; match: Record<string, unknown>; created_by: string; created_by_name: string | null; scope_user_name?: string | null; scope_user: string | null; scope_tenant: string | null;
  expires_at: Date; revoked_at: Date | null; uses: number;
}

const toGrant = (r: Row): Grant & { createdByName: string } => ({
  id: r.id, tool: r.tool, match: r.match, scope: r.scope_tenant === null ? 'user' : 'tenant', createdBy: r.created_by, createdByName: r.created_by_name ?? '', scopeUserName: r.scope_user_name ?? null,
  scopeUser: r.scope_user, scopeTenant: r.scope_tenant, expiresAt: r.expires_at, revokedAt: r.revoked_at, uses: r.uses,
});

const COLUMNS = `g.id, g.tool, g.match, g.created_by, u.username AS created_by_name, su.username AS scope_user_name, g.scope_user, g.scope_tenant, g.expires_at, g.revoked_at, g.uses`;

/** Pure: does a call's arguments satisfy a grant's match (each named argument equal, canonical JSON)? */
export function grantMatches(match: Readonly<Record<string, unknown>>, args: Readonly<Record<string, unknown>>): boolean {
  return Object.entries(match).every(([key, value]) => Object.hasOwn(args, key) && canonicalJson(args[key]) === canonicalJson(value));
}

/** A call's deciding rule as a grant is checked against it (agent/tools/grant.ts builds it). */
export interface CallRule {
  /** Its canonical hash (policy/rule-identity.ts), asked only when the match fits. */
  hash: () => string;
  /** It has `when`: an empty match is its own scope. */
  scoped: boolean;
}

/**
 * Pure: does this grant cover this call (issue 36 item 2)? Its match is satisfied, and not empty
 * unless the call's rule is scoped, and it was made under the call's deciding rule (the same hash;
 * a grant with none, made before migration 241, covers nothing).
 */
export function grantCovers(grant: { match: Readonly<Record<string, unknown>>; ruleHash: string | null }, call: { args: Readonly<Record<string, unknown>>; rule: CallRule }): boolean {
  if (!grantMatches(grant.match, call.args)) return false;
  if (Object.keys(grant.match).length === 0 && !call.rule.scoped) return false;
  return grant.ruleHash !== null && grant.ruleHash === call.rule.hash();
}

/** The approver terms of the rule a grant was made under, as stored (migration 241). */
export interface GrantApprovers {
  required: number;
  roles: readonly string[];
  users: readonly string[];
  distinctFromRequester: boolean;
}

export async function createGrant(
  db: Queryable,
  g: { tool: string; match: Record<string, unknown>; createdBy: string; scopeUser: string | null; scopeTenant: string | null; expiresAt: Date; ruleHash: string; approvers: GrantApprovers },
): Promise<Grant & { createdByName: string }> {
  const { rows } = await db.query<Row>(
    `WITH g AS (INSERT INTO approval_grants (tool, match, created_by, scope_user, scope_tenant, expires_at, rule_hash, approvers) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *)
     SELECT ${COLUMNS} FROM g LEFT JOIN users u ON u.id = g.created_by LEFT JOIN users su ON su.id = g.scope_user`,
    [g.tool, JSON.stringify(g.match), g.createdBy, g.scopeUser, g.scopeTenant, g.expiresAt, g.ruleHash, JSON.stringify(g.approvers)],
  );
  return toGrant(rows[0]);
}

/** The grants a user may see: those they made, those for them, and their tenant's. Newest first. */
export async function listGrants(db: Queryable, who: { userId: string; tenant: string }): Promise<Array<Grant & { createdByName: string }>> {
  const { rows } = await db.query<Row>(
    `SELECT ${COLUMNS} FROM approval_grants g LEFT JOIN users u ON u.id = g.created_by LEFT JOIN users su ON su.id = g.scope_user
     WHERE g.created_by = $1 OR g.scope_user = $1 OR g.scope_tenant = $2 ORDER BY g.created_at DESC, g.id LIMIT 500`,
    [who.userId, who.tenant],
  );
  return rows.map(toGrant);
}

/** Revokes a grant the user made or holds (an admin: any of the tenant's); null when none such is live. */
export async function revokeGrant(db: Queryable, who: { userId: string; tenant: string; admin: boolean }, id: string, now: Date): Promise<(Grant & { createdByName: string }) | null> {
  const { rows } = await db.query<Row>(
    `WITH g AS (UPDATE approval_grants SET revoked_at = $4 WHERE id::text = $1 AND revoked_at IS NULL
                AND (created_by = $2 OR scope_user = $2 OR ($5 AND scope_tenant = $3)) RETURNING *)
     SELECT ${COLUMNS} FROM g LEFT JOIN users u ON u.id = g.created_by LEFT JOIN users su ON su.id = g.scope_user`,
    [id, who.userId, who.tenant, now, who.admin],
  );
  return rows[0] ? toGrant(rows[0]) : null;
}

/**
 * The live grant a call of `tool` with `args` by this user runs under, its use counted, with who
 * made it and until when (the tool card says so); null: none (the call asks). Checked and counted
 * in one statement, so a grant revoked before it is never used.
 */
export async function useMatchingGrant(db: Queryable, call: { userId: string; tenant: string; tool: string; args: Readonly<Record<string, unknown>>; rule: CallRule; now: Date }): Promise<{ id: string; by: string; until: string } | null> {
  const { rows } = await db.query<{ id: string; match: Record<string, unknown>; rule_hash: string | null }>(
    `SELECT id, match, rule_hash FROM approval_grants WHERE tool = $1 AND revoked_at IS NULL AND expires_at > $4 AND (scope_user = $2 OR scope_tenant = $3)
     ORDER BY expires_at DESC, id`,
    [call.tool, call.userId, call.tenant, call.now],
  );
  for (const row of rows) {
    if (!grantCovers({ match: row.match, ruleHash: row.rule_hash }, call)) continue;
    const used = await db.query<{ id: string; username: string | null; expires_at: Date }>(
      `WITH g AS (UPDATE approval_grants SET uses = uses + 1 WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 RETURNING id, created_by, expires_at)
       SELECT g.id, u.username, g.expires_at FROM g LEFT JOIN users u ON u.id = g.created_by`,
      [row.id, call.now],
    );
    const hit = used.rows[0];
    if (hit) return { id: hit.id, by: hit.username ?? '', until: hit.expires_at.toISOString() };
  }
  return null;
}
