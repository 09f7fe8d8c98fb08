/**
 * Group commit for audit rows. A write starts a flush at once when none is running (no added
 * latency when idle); writes arriving during a flush join the next one, which inserts them all in
 * one statement. Each write resolves only after its row is committed, so the caller can still
 * hold the response until the audit row exists.
 * @module
 */
import { insertAuditBatch, type AuditEntry } from '../../db/audit.ts';
import type { Queryable } from '../../db/index.ts';

export interface AuditWriter {
  write(entry: AuditEntry): Promise<void>;
}

export function createAuditWriter(q: Queryable, options: { maxBatch?: number } = {}): AuditWriter {
  const maxBatch = options.maxBatch ?? 500;
  let pending: { entry: AuditEntry; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let flushing = false;

  /** A single row; arguments jsonb cannot store (e.g. U+0000) are replaced by a marker. */
  async function insertOne(entry: AuditEntry): Promise<void> {
    try {
      await insertAuditBatch(q, [entry]);
    } catch {
      await insertAuditBatch(q, [{ ...entry, arguments: { unrecordable_arguments: true } }]);
    }
  }

  async function flush(): Promise<void> {
    flushing = true;
    try {
      while (pending.length > 0) {
        const batch = pending.slice(0, maxBatch);
        pending = pending.slice(batch.length);
        try {
          await insertAuditBatch(q, batch.map((b) => b.entry));
          for (const b of batch) b.resolve();
        } catch {
          // One unstorable row must not lose the others: retry each alone.
          await Promise.all(batch.map((b) => insertOne(b.entry).then(b.resolve, b.reject)));
        }
      }
    } finally {
      flushing = false;
    }
  }

  return {
    write(entry) {
      return new Promise<void>((resolve, reject) => {
        pending.push({ entry, resolve, reject });
        if (!flushing) void flush();
      });
    },
  };
}
