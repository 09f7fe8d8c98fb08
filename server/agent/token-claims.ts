/**
 * Reading the claims of a token the gateway already verified (at /chat, or the api's on-behalf
 * check), for audit rows and the policy's subject: no second verification, and junk reads as no
 * claims rather than an error.
 * @module
 */
import { decodeJwt } from 'jose';

export function tokenClaims(token: string | undefined): Record<string, unknown> {
  if (!token) return {};
  try {
    return decodeJwt(token) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** A claim that is a string, else null. */
export const claimString = (v: unknown): string | null => (typeof v === 'string' ? v : null);
