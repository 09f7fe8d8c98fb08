/**
 * Per-owner upload budgets: an owner's uploads run one at a time, each with the bytes left in the
 * request's total and the owner's quota, so two requests of one owner cannot both pass the quota.
 * Shared by every `UploadStorage` (each counts usage its own way).
 * @module
 */
import { ownerFolder, type OwnerKey } from './ownership.ts';

/** Bytes one upload request may still write. */
export interface UploadBudget {
  /** Left within the request's total. */
  request: number;
  /** Left within the owner's quota. */
  quota: number;
}

export interface UploadLimits {
  requestMaxBytes: number;
  quotaBytes: number;
}

export class OwnerBudgets {
  readonly #chains = new Map<string, Promise<unknown>>();

  constructor(
    private readonly limits: UploadLimits,
    private readonly usage: (owner: OwnerKey) => Promise<number>,
  ) {}

  /** Runs `task` after the owner's previous uploads, with the budget left then. */
  async run<T>(owner: OwnerKey, task: (budget: UploadBudget) => Promise<T>): Promise<T> {
    const folder = ownerFolder(owner);
    const previous = this.#chains.get(folder) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(async () => {
      const used = Number.isFinite(this.limits.quotaBytes) ? await this.usage(owner) : 0;
      return task({ request: this.limits.requestMaxBytes, quota: this.limits.quotaBytes - used });
    });
    this.#chains.set(folder, run);
    try {
      return await run;
    } finally {
      if (this.#chains.get(folder) === run) this.#chains.delete(folder);
    }
  }
}
