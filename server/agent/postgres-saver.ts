/**
 * PostgresSaver with each write in one statement. Upstream's put is BEGIN, one INSERT per channel
 * blob, the checkpoint's INSERT and COMMIT, and putWrites is BEGIN, one INSERT per write, COMMIT:
 * five to eight round trips per graph step; the two methods were 8% of the busy CPU of the chat
 * bench's gateway process (`BENCH_PROF=1 npm run bench -- chat`). Here the rows go in as arrays (`unnest`) and the
 * blobs ride with the checkpoint as a data-modifying CTE: the same rows, the same conflict rules,
 * atomic as one statement is. Reads, setup and deleteThread are upstream's. LangGraph's own
 * checkpointer validation suite runs against both (tests/integration/checkpointer-contract.test.ts).
 * @module
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { WRITES_IDX_MAP, type ChannelVersions, type Checkpoint, type CheckpointMetadata, type PendingWrite } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';

/** node-pg sends a Buffer element of an array as bytea; a bare Uint8Array it would not. */
const bytes = (value: Uint8Array | undefined): Buffer | null => (value ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : null);

/** Columns of `rows` as arrays, one per column (for `unnest`). */
function columns<T extends unknown[]>(rows: T[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, c) => rows.map((row) => row[c]));
}

/** The last channel version handed out by this process (getNextVersion). */
let lastVersion = 0;

export class OneStatementPostgresSaver extends PostgresSaver {
  readonly #pool: pg.Pool;
  readonly #sql: { put: string; upsertWrites: string; insertWrites: string };

  constructor(pool: pg.Pool, options: { schema: string }) {
    super(pool, undefined, options);
    this.#pool = pool;
    const table = (name: string) => `"${options.schema.replaceAll('"', '""')}".${name}`;
    const writes = (onConflict: string) =>
      `INSERT INTO ${table('checkpoint_writes')} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::bytea[])
       ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) ${onConflict}`;
    this.#sql = {
      put: `WITH blobs AS (
              INSERT INTO ${table('checkpoint_blobs')} (thread_id, checkpoint_ns, channel, version, type, blob)
              SELECT * FROM unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::bytea[])
              ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
            )
            INSERT INTO ${table('checkpoints')} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`,
      upsertWrites: writes('DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob'),
      insertWrites: writes('DO NOTHING'),
    };
  }

  /**
   * Channel versions that never repeat within a thread, across its branches (issue 29). Upstream
   * counts 1, 2, 3… per channel, and a blob is keyed by (thread, channel, version) with ON CONFLICT
   * DO NOTHING: a run forked from an older checkpoint counted again from there, so its blobs
   * collided with the abandoned branch's, were dropped, and the fork read the other branch's
   * messages (tests/integration/branches.test.ts; upstream langgraphjs#1812, fix proposed in
   * langgraphjs#2584 as Python's string versions). Here the next version is at least the current
   * microsecond (plus a little jitter against another process's clock): still a number, still
   * increasing, so threads stored with upstream's small integers go on unchanged.
   */
  override getNextVersion(current: number | undefined): number {
    const now = Date.now() * 1000 + Math.floor(Math.random() * 1000);
    lastVersion = Math.max(typeof current === 'number' ? current + 1 : 1, now, lastVersion + 1);
    return lastVersion;
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
    const { thread_id: threadId, checkpoint_ns: checkpointNs = '', checkpoint_id: parentId } = config.configurable;
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(threadId, checkpointNs, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata),
    ]);
    const blobColumns = columns(blobs.map((b) => [b[0], b[1], b[2], b[3], b[4], bytes(b[5])]), 6);
    await this.#pool.query(this.#sql.put, [threadId, checkpointNs, checkpoint.id, parentId, this._dumpCheckpoint(checkpoint), serializedMetadata, ...blobColumns]);
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    // Writes to the special channels replace an earlier attempt's; the rest keep the first (as upstream).
    const sql = writes.every(([channel]) => channel in WRITES_IDX_MAP) ? this.#sql.upsertWrites : this.#sql.insertWrites;
    const dumped = await this._dumpWrites(config.configurable?.thread_id, config.configurable?.checkpoint_ns, config.configurable?.checkpoint_id, taskId, writes);
    if (dumped.length === 0) return;
    await this.#pool.query(sql, columns(dumped.map((w) => [w[0], w[1], w[2], w[3], w[4], w[5], w[6], bytes(w[7])]), 8));
  }
}
