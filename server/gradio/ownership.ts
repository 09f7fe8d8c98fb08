/**
 * Who owns what: when the plugin has an `identityKey`, sessions, events and uploads carry the
 * owner key of the identity that created them. Pure decisions, tested from tables.
 * @module
 */
import { createHash } from 'node:crypto';

/** An owner key, or null when the app binds nothing to identities (upstream's capability model). */
export type OwnerKey = string | null;

/**
 * The bus key of a session: the client's session_hash scoped by its owner, so another identity
 * that sends the same session_hash gets a session of its own and never sees this one's frames.
 * Length-prefixed, so no owner/hash pair can spell another pair's key.
 */
export function sessionKey(sessionHash: string, owner: OwnerKey): string {
  return owner === null ? sessionHash : `${owner.length}:${owner}:${sessionHash}`;
}

/** What a cancel presents: the caller's owner key (null when unauthenticated) and the body's session_hash. */
export interface CancelClaim {
  owner: OwnerKey;
  sessionHash?: string;
}

/** The event a cancel aims at. */
export interface EventOwnership {
  owner: OwnerKey;
  sessionHash: string;
}

/**
 * Whether a cancel may stop an event (issue 9 decision): the caller owns it by identity, or
 * presents both its session_hash and its event_id (the JS client sends exactly that, without
 * its `token:` Authorization). Unbound events keep upstream's rule: the event_id is the
 * capability, and a session_hash, when given, must match.
 */
export function mayCancel(event: EventOwnership, claim: CancelClaim): boolean {
  if (claim.sessionHash !== undefined && claim.sessionHash === event.sessionHash) return true;
  if (event.owner === null) return claim.sessionHash === undefined;
  return claim.owner !== null && claim.owner === event.owner;
}

/** The folder name of an owner's uploads: a digest, so any key is a safe single path segment. */
export function ownerFolder(owner: OwnerKey): string {
  return owner === null ? 'shared' : `u-${createHash('sha256').update(owner).digest('hex').slice(0, 40)}`;
}
