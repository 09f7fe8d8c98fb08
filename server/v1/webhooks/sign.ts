/**
 * The webhook signature, in the scheme of Stripe's and Slack's: `Airlock-Signature: t=<unix
 * seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the endpoint's secret. A receiver recomputes
 * it over the raw body and refuses an old `t` (replays). Pure.
 * @module
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Airlock-Signature';

export function signWebhook(secret: string, timestampS: number, body: string): string {
  const v1 = createHmac('sha256', secret).update(`${timestampS}.${body}`).digest('hex');
  return `t=${timestampS},v1=${v1}`;
}

/** What a receiver does: true when `header` signs `body` with `secret` within `toleranceS` of `nowS`. */
export function verifyWebhook(secret: string, header: string, body: string, nowS: number, toleranceS = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowS - t) > toleranceS || !parts.v1) return false;
  const want = Buffer.from(signWebhook(secret, t, body).split('v1=')[1], 'hex');
  const got = Buffer.from(parts.v1, 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}
