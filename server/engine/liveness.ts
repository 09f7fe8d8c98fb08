/**
 * This process's pulse in the database (db/processes.ts): one dedicated connection whose backend
 * is registered as the owner of this process's runs. When the process dies, PostgreSQL ends that
 * backend, and other processes take its conversations over at once (the lease TTL is only the
 * backstop for a hung process).
 *
 * A database blip must never turn into a false death that two processes act on: when the pulse
 * connection breaks, others may already treat this process as gone, so `onLost` ends this
 * process's runs first (the composition root passes the engine's), and only then does the
 * process register again, under a new epoch. Recovery settles each run once (a conditional
 * UPDATE), whoever gets there first.
 * @module
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '../db/index.ts';
import { heartbeatProcess, registerProcess, removeProcess } from '../db/processes.ts';

export interface LivenessOptions {
  pool: Pool;
  /** Heartbeat period; the lease TTL's third, as lease renewal. */
  heartbeatMs: number;
  log: { warn(obj: object, msg: string): void };
  /** How long to wait between attempts to register again after the connection broke. */
  retryMs?: number;
}

export class ProcessLiveness {
  /** The owner of this process's runs (host:pid:random), as the engine writes it on runs and leases. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  #epoch = 0;
  #client: PoolClient | null = null;
  #heartbeat: NodeJS.Timeout | undefined;
  #closed = false;
  #onLost: () => Promise<void> = async () => {};
  readonly #options: LivenessOptions;

  private constructor(options: LivenessOptions) {
    this.#options = options;
  }

  /** Registers this process; resolves once its pulse is in the database. */
  static async start(options: LivenessOptions): Promise<ProcessLiveness> {
    const liveness = new ProcessLiveness(options);
    await liveness.#register();
    liveness.#heartbeat = setInterval(() => {
      if (liveness.#client) heartbeatProcess(liveness.#client, liveness.owner).catch(() => {});
    }, options.heartbeatMs);
    liveness.#heartbeat.unref();
    return liveness;
  }

  /** The epoch this process is registered under (0 at start, +1 per re-registration). */
  get epoch(): number {
    return this.#epoch;
  }

  /** What to end before registering again when the pulse is lost (the engine's runs). */
  onLost(end: () => Promise<void>): void {
    this.#onLost = end;
  }

  /** A graceful stop: the row goes, so nothing waits on it. */
  async stop(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    const client = this.#client;
    this.#client = null;
    if (!client) return;
    await removeProcess(client, this.owner).catch(() => {});
    client.release();
  }

  async #register(): Promise<void> {
    const client = await this.#options.pool.connect();
    client.on('error', () => void this.#lost(client));
    try {
      await registerProcess(client, { owner: this.owner, pid: process.pid, epoch: this.#epoch });
    } catch (error) {
      client.release(true);
      throw error;
    }
    this.#client = client;
  }

  async #lost(client: PoolClient): Promise<void> {
    if (this.#client !== client || this.#closed) return;
    this.#client = null;
    client.release(true);
    this.#options.log.warn({ owner: this.owner, epoch: this.#epoch }, 'lost the liveness connection: ending this process\'s runs, then registering again');
    await this.#onLost().catch(() => {});
    this.#epoch++;
    const retry = async () => {
      if (this.#closed) return;
      try {
        await this.#register();
      } catch {
        setTimeout(retry, this.#options.retryMs ?? 500).unref();
      }
    };
    await retry();
  }
}
