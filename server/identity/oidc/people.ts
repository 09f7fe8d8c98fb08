/**
 * The person behind a provider's claims (issue 39): a user is (issuer, subject), never an email.
 * The first sign-in creates the user (just in time) with a username chosen once: the first claim
 * of OIDC_USERNAME_CLAIM that fits when lowercased, else `u-<12 hex of sha256(iss|sub)>`; a name
 * already held gets `-2`, `-3`, …, so nobody inherits another person's name (or their policy
 * rules), and a local account is never taken over. Later sign-ins update name, email and, with
 * OIDC_ROLE_MAP, role and tenant; never the username.
 * @module
 */
import { createHash } from 'node:crypto';
import type { UserRole } from '../../auth/index.ts';
import type { Queryable } from '../../db/index.ts';
import { USERNAME } from '../accounts.ts';

export interface Person {
  issuer: string;
  subject: string;
  source: 'oidc' | 'proxy';
  /** Claim values in OIDC_USERNAME_CLAIM's order (missing ones skipped). */
  usernameCandidates: string[];
  email: string | null;
  displayName: string | null;
  /** From OIDC_ROLE_MAP; undefined: no map (a new person is a viewer, an existing one keeps theirs). */
  role?: UserRole;
  tenant?: string;
}

export interface SignedInUser {
  id: string;
  username: string;
  role: UserRole;
  disabled: boolean;
}

/** The username a new person gets, before collisions: the first candidate that fits. */
export function baseUsername(p: Pick<Person, 'issuer' | 'subject' | 'usernameCandidates'>): string {
  for (const candidate of p.usernameCandidates) {
    const name = candidate.trim().toLowerCase();
    if (USERNAME.test(name)) return name;
  }
  return `u-${createHash('sha256').update(`${p.issuer}|${p.subject}`).digest('hex').slice(0, 12)}`;
}

/** `-2`, `-3`, … appended within the 64 characters a username may have. */
export function numbered(base: string, n: number): string {
  if (n === 1) return base;
  const suffix = `-${n}`;
  return base.slice(0, 64 - suffix.length) + suffix;
}

const RETURNING = 'RETURNING id::text, username, role, disabled_at IS NOT NULL AS disabled';

/** Finds or creates the user of (issuer, subject) and records this sign-in. */
export async function signInPerson(db: Queryable, p: Person): Promise<SignedInUser> {
  const { rows: existing } = await db.query<SignedInUser>(
    `UPDATE users SET email = $3, display_name = $4, last_sign_in_at = now(),
            role = COALESCE($5, role), role_from_claims = ($5::text IS NOT NULL), tenant = COALESCE($6, tenant)
      WHERE issuer = $1 AND subject = $2 ${RETURNING}`,
    [p.issuer, p.subject, p.email, p.displayName, p.role ?? null, p.tenant ?? null],
  );
  if (existing[0]) return existing[0];
  const base = baseUsername(p);
  for (let n = 1; n < 1000; n++) {
    const { rows } = await db.query<SignedInUser>(
      `INSERT INTO users (username, role, source, issuer, subject, email, display_name, role_from_claims, tenant, last_sign_in_at)
       VALUES ($1, COALESCE($2, 'viewer'), $3, $4, $5, $6, $7, $2::text IS NOT NULL, COALESCE($8, 'demo'), now())
       ON CONFLICT DO NOTHING ${RETURNING}`,
      [numbered(base, n), p.role ?? null, p.source, p.issuer, p.subject, p.email, p.displayName, p.tenant ?? null],
    );
    if (rows[0]) return rows[0];
    // The conflict may be this very person, created a moment ago by a concurrent sign-in.
    const { rows: raced } = await db.query<SignedInUser>(`SELECT id::text, username, role, disabled_at IS NOT NULL AS disabled FROM users WHERE issuer = $1 AND subject = $2`, [p.issuer, p.subject]);
    if (raced[0]) return raced[0];
  }
  throw new Error(`no free username for ${base}`);
}
