/**
 * Delivering approval webhooks from the PostgreSQL outbox (issue 26 item 3). One replica delivers
 * at a time: the one holding a session advisory lock (per schema) on a connection of its own; the
 * others try again every few seconds, so a dead holder is replaced as soon as PostgreSQL drops its
 * session. The holder expands new outbox events into one delivery per endpoint, then POSTs what is
 * due, signed (sign.ts), with a 10 s timeout and no redirect followed. A failure is tried again with exponential backoff (1 s
 * doubling to 5 min) and given up after MAX_ATTEMPTS; each outcome counts in
 * `airlock_webhook_deliveries_total{outcome}`. A delivery is recorded after its POST: a crash between
 * the two sends it again, so receivers deduplicate by the body's `id`. Each round also writes the
 * `approval.escalated` events that are due (a rule's `escalate.after_s` passed with nobody deciding).
 * A signed audit chain head (`audit.checkpoint`, issue 36 item 3) goes the same way, to the
 * endpoints that name it.
 * @module
 */
import { CHECKPOINT_EVENT, dueDeliveries, enqueueDueEscalations, expandOutbox, recordAttempt, type DueDelivery } from '../../db/approval-outbox.ts';
import { releaseOnce, withTransaction, type Pool } from '../../db/index.ts';
import { processMetrics } from '../../metrics/index.ts';
import { approvalWire } from '../serialize.ts';
import { mintLinksForApproval } from '../../db/approval-links.ts';
import { checkpointBody, jsonBody, slackBody, type Links } from './body.ts';
import type { WebhookEndpoint } from './settings.ts';
import { SIGNATURE_HEADER, signWebhook } from './sign.ts';

export const MAX_ATTEMPTS = 20;
/** The events whose notification carries decision links. */
const LINKED = new Set(['approval.requested', 'approval.progress', 'approval.escalated']);
const POLL_MS = 500;
const LEADER_RETRY_MS = 2_000;
const POST_TIMEOUT_MS = 10_000;

/** The first retry's delay by default (APPROVAL_WEBHOOK_RETRY_MS); the longest is 300 times it. */
export const RETRY_MS = 1_000;

/** Pure: when to try again after `attempts` failed tries (null: give up); `firstMs` doubling, at most 300 × it. */
export function nextAttemptAt(attempts: number, now: Date, firstMs = RETRY_MS): Date | null {
  if (attempts >= MAX_ATTEMPTS) return null;
  const delay = Math.min(300, 2 ** Math.max(0, attempts - 1)) * firstMs;
  return new Date(now.getTime() + delay);
}

export interface DeliveryOptions {
  pool: Pool;
  endpoints: WebhookEndpoint[];
  publicUrl: string | undefined;
  log: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
  /** The retry schedule's first delay (APPROVAL_WEBHOOK_RETRY_MS; default RETRY_MS). */
  retryMs?: number;
  fetch?: typeof fetch;
  now?: () => Date;
}

/** Starts delivering; returns the stop (waits for the current round). */
export function startWebhookDelivery(o: DeliveryOptions): () => Promise<void> {
  const now = o.now ?? (() => new Date());
  const post = o.fetch ?? globalThis.fetch.bind(globalThis);
  const deliveries = processMetrics().webhookDeliveries;
  let stopped = false;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => (clearTimeout(timer), resolve());
  });

  /**
   * One-use links for the designated approvers of a pending approval (PUBLIC_URL only), minted once
   * per (approval, approver, receiver): a retry, or the same receiver's next event of the approval,
   * carries the same links rather than new ones (mintLinksForApproval derives them from `endpoint`).
   */
  async function linksFor(event: { type: string; approval: { id: string; status: string } }, endpoint: WebhookEndpoint): Promise<Links> {
    if (!o.publicUrl || event.approval.status !== 'pending' || !LINKED.has(event.type)) return [];
    const minted = await mintLinksForApproval(o.pool, event.approval.id, { secret: endpoint.secret, receiver: endpoint.url });
    return minted.map((l) => ({ user: l.user, url: `${o.publicUrl}/approve/${l.token}` }));
  }

  /** What an event posts to `endpoint`: an approval's notification (with links), or a signed audit head. */
  async function bodyFor(e: DueDelivery['event'], endpoint: WebhookEndpoint): Promise<string> {
    if (e.type === CHECKPOINT_EVENT) return JSON.stringify(checkpointBody(e, endpoint.format));
    const event = { id: e.id, type: e.type, createdAt: e.createdAt, approval: approvalWire(e.approval) };
    const links = await linksFor(event, endpoint);
    return JSON.stringify(endpoint.format === 'slack' ? slackBody(event, o.publicUrl, links) : jsonBody(event, o.publicUrl, links));
  }

  async function deliver(d: DueDelivery): Promise<void> {
    const endpoint = o.endpoints.find((e) => e.url === d.url);
    let error: string | null = null;
    if (!endpoint) error = 'the endpoint is no longer configured';
    else {
      const body = await bodyFor(d.event, endpoint);
      try {
        const res = await post(endpoint.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signWebhook(endpoint.secret, Math.floor(now().getTime() / 1000), body), 'user-agent': 'Airlock-Webhooks/1' },
          body,
          // A redirect is never followed (fetch's default would re-send a 307/308's method, body and
          // signature anywhere, loopback included): any 3xx is a failed delivery, "HTTP 3xx".
          redirect: 'manual',
          signal: AbortSignal.timeout(POST_TIMEOUT_MS),
        });
        if (!res.ok) error = `HTTP ${res.status}`;
        await res.body?.cancel().catch(() => undefined);
      } catch (e) {
        error = (e as Error).message;
      }
    }
    const at = now();
    const nextAt = error === null ? null : endpoint ? nextAttemptAt(d.attempts + 1, at, o.retryMs) : null;
    await recordAttempt(o.pool, { eventId: d.event.id, url: d.url, ok: error === null, error, nextAt, now: at });
    deliveries.inc({ outcome: error === null ? 'delivered' : nextAt ? 'retry' : 'failed' });
    if (error) o.log.warn({ url: d.url, eventId: d.event.id, attempts: d.attempts + 1, error }, 'an approval webhook delivery failed');
  }

  const loop = (async () => {
    while (!stopped) {
      let client;
      try {
        client = await o.pool.connect();
      } catch {
        await sleep(LEADER_RETRY_MS);
        continue;
      }
      const release = releaseOnce(client);
      let lost = false;
      client.on('error', () => (lost = true));
      try {
        const { rows } = await client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext('airlock.approval_webhooks:' || current_schema())) AS ok`);
        if (!rows[0].ok) {
          release();
          await sleep(LEADER_RETRY_MS);
          continue;
        }
        while (!stopped && !lost) {
          // Nobody answered in time: the rule's further role is notified (escalate.after_s), once.
          await withTransaction(o.pool, (tx) => enqueueDueEscalations(tx, now()));
          await expandOutbox(o.pool, o.endpoints);
          for (const d of await dueDeliveries(o.pool, now())) {
            if (stopped) break;
            await deliver(d);
          }
          await sleep(POLL_MS);
        }
        // Closing the session gives the lock up.
        release(true);
      } catch (error) {
        release(error as Error);
        o.log.warn({ err: error }, 'approval webhook delivery paused');
        await sleep(LEADER_RETRY_MS);
      }
    }
  })();

  return async () => {
    stopped = true;
    wake?.();
    await loop;
  };
}
