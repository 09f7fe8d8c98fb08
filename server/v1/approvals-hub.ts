/**
 * The approvals streams' one shared listener (issue 36 item 4). Before it, every open
 * `GET /approvals/stream` re-read its own list on every commit of any conversation, so one viewer
 * with 1,000 streams made 1,000 reads per commit and slowed everyone's answers. Now a process
 * holds one ledger subscription: a commit names its conversation, whose tenant (cached: a
 * conversation never changes owner) is marked changed; after a short debounce each changed tenant
 * that has streams open here is read once (its pending approvals, `listApprovalRecords` with no
 * viewer), and every stream of it gets its own list, filtered in memory by the same visibility rule
 * (`approvalVisibleTo`), sent only when it differs from what that stream last got. A wake with no
 * conversation (the LISTEN connection was lost and reopened) re-reads every tenant with streams.
 * Each user may hold `perUser` streams in this process (APPROVAL_STREAMS_PER_USER); the next one is
 * 429 RATE_LIMITED with Retry-After 5 s.
 * @module
 */
import { approvalVisibleTo, listApprovalRecords, type ApprovalRecord, type ApprovalViewer } from '../db/approval-records.ts';
import type { Pool } from '../db/index.ts';
import { ANY_CONVERSATION, type Ledger } from '../engine/index.ts';
import { AirlockError } from '../errors.ts';
import { approvalWire } from './serialize.ts';

/** Commits in a burst (a run's events) read the list once. */
const DEBOUNCE_MS = 150;
/** The most approvals one stream's frame lists. */
export const MAX_LISTED = 200;
/** The most pending approvals of one tenant read per change (each stream keeps MAX_LISTED of its own). */
const TENANT_READ_MAX = 5_000;
/** Conversations whose tenant is remembered; past it the memory starts again. */
const TENANT_CACHE_MAX = 10_000;
/** What a refused stream is told to wait (seconds). */
export const STREAM_RETRY_AFTER_S = 5;

export interface StreamViewer extends ApprovalViewer {
  /** Whose streams count against the per-user cap (the caller's user id, whatever `userId` filters). */
  capKey: string;
}

/** What a stream sends: its `approvals` frame's data (the v1 approval objects). */
export interface ApprovalsFrame {
  approvals: ReturnType<typeof approvalWire>[];
}

interface Stream {
  viewer: StreamViewer;
  send(frame: ApprovalsFrame): void;
  last: string;
}

export interface ApprovalHubOptions {
  pool: Pool;
  ledger: Ledger;
  /** APPROVAL_STREAMS_PER_USER. */
  perUser: number;
  log: { warn(obj: object, msg?: string): void };
  now?: () => Date;
}

export function createApprovalHub(o: ApprovalHubOptions) {
  const now = o.now ?? (() => new Date());
  const byTenant = new Map<string, Set<Stream>>();
  const perUser = new Map<string, number>();
  const tenantOfConversation = new Map<string, string | null>();
  const dirty = new Set<string>();
  const reads = new Map<string, Promise<ApprovalRecord[]>>();
  let timer: NodeJS.Timeout | null = null;
  let unsubscribe: (() => void) | null = null;

  /** One read of a tenant's pending approvals at a time: concurrent askers share it. */
  function readTenant(tenant: string): Promise<ApprovalRecord[]> {
    let read = reads.get(tenant);
    if (!read) {
      read = listApprovalRecords(o.pool, { tenant, userId: null, status: 'pending', limit: TENANT_READ_MAX }).finally(() => reads.delete(tenant));
      reads.set(tenant, read);
    }
    return read;
  }

  function deliver(stream: Stream, rows: ApprovalRecord[]): void {
    const at = now();
    const frame = { approvals: rows.filter((r) => approvalVisibleTo(r, stream.viewer, at)).slice(0, MAX_LISTED).map(approvalWire) };
    const body = JSON.stringify(frame);
    if (body === stream.last) return;
    stream.last = body;
    stream.send(frame);
  }

  async function refresh(tenant: string): Promise<void> {
    const streams = byTenant.get(tenant);
    if (!streams?.size) return;
    try {
      const rows = await readTenant(tenant);
      for (const s of byTenant.get(tenant) ?? []) deliver(s, rows);
    } catch (err) {
      o.log.warn({ err, tenant }, 'the approvals streams could not read the list');
    }
  }

  async function tenantOf(conversationId: string): Promise<string | null> {
    if (tenantOfConversation.has(conversationId)) return tenantOfConversation.get(conversationId)!;
    const { rows } = await o.pool.query<{ tenant: string }>(
      `SELECT u.tenant FROM conversations c JOIN users u ON u.id = c.user_id WHERE c.id::text = $1`,
      [conversationId],
    );
    if (tenantOfConversation.size >= TENANT_CACHE_MAX) tenantOfConversation.clear();
    const tenant = rows[0]?.tenant ?? null;
    tenantOfConversation.set(conversationId, tenant);
    return tenant;
  }

  function schedule(): void {
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      const tenants = [...dirty];
      dirty.clear();
      for (const t of tenants) void refresh(t);
    }, DEBOUNCE_MS);
  }

  function changed(_seq: number, conversationId?: string): void {
    if (byTenant.size === 0) return;
    if (conversationId === undefined) {
      for (const t of byTenant.keys()) dirty.add(t);
      schedule();
      return;
    }
    tenantOf(conversationId).then(
      (tenant) => {
        if (tenant === null || !byTenant.has(tenant)) return;
        dirty.add(tenant);
        schedule();
      },
      (err) => o.log.warn({ err, conversationId }, 'the approvals streams could not find a conversation\'s tenant'),
    );
  }

  return {
    /**
     * Opens a stream for `viewer`: RATE_LIMITED past the per-user cap; else its list is sent as soon
     * as it is read, and again whenever it changes. Returns the close (idempotent).
     */
    open(viewer: StreamViewer, send: (frame: ApprovalsFrame) => void): () => void {
      const held = perUser.get(viewer.capKey) ?? 0;
      if (held >= o.perUser) {
        throw new AirlockError('RATE_LIMITED', `At most ${o.perUser} approval streams at once per user; close one first.`, { details: { retry_after_s: STREAM_RETRY_AFTER_S } });
      }
      perUser.set(viewer.capKey, held + 1);
      unsubscribe ??= o.ledger.subscribe(ANY_CONVERSATION, changed);
      const stream: Stream = { viewer, send, last: '' };
      let set = byTenant.get(viewer.tenant);
      if (!set) byTenant.set(viewer.tenant, (set = new Set()));
      set.add(stream);
      let closed = false;
      readTenant(viewer.tenant).then(
        (rows) => closed || deliver(stream, rows),
        (err) => o.log.warn({ err, tenant: viewer.tenant }, 'the approvals stream could not read the list'),
      );
      return () => {
        if (closed) return;
        closed = true;
        const n = (perUser.get(viewer.capKey) ?? 1) - 1;
        if (n > 0) perUser.set(viewer.capKey, n);
        else perUser.delete(viewer.capKey);
        set.delete(stream);
        if (set.size === 0 && byTenant.get(viewer.tenant) === set) byTenant.delete(viewer.tenant);
      };
    },
    /** Streams open now (tests, metrics). */
    openCount(): number {
      let n = 0;
      for (const s of byTenant.values()) n += s.size;
      return n;
    },
    stop(): void {
      unsubscribe?.();
      unsubscribe = null;
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

export type ApprovalHub = ReturnType<typeof createApprovalHub>;
