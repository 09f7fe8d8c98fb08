/**
 * The upload storage contract: one suite for the disk store (unit project) and the PostgreSQL
 * store (integration project). `here` and `there` are two replicas' stores for PostgreSQL (each
 * with its own folder) and one store twice for disk: what is saved here is read there.
 */
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UploadLimitError, type UploadStorage } from '../../server/gradio/upload-store.ts';

export interface StorePair {
  here: UploadStorage;
  there: UploadStorage;
  close(): Promise<void>;
}

const QUOTA = 1_000;
export const CONTRACT_LIMITS = { requestMaxBytes: 800, quotaBytes: QUOTA };

const save = (store: UploadStorage, owner: string, name: string, bytes: Buffer) =>
  store.withBudget(owner, (budget) => store.save(Readable.from([bytes]), name, owner, budget, () => false));

export function runUploadContract(name: string, factory: () => Promise<StorePair>): void {
  describe(`UploadStorage contract: ${name}`, () => {
    let pair: StorePair;
    beforeAll(async () => {
      pair = await factory();
    });
    afterAll(() => pair.close());

    it('1. a saved file is read back, byte for byte, from any replica', async () => {
      const bytes = Buffer.from([0, 1, 2, 255, 10, 13, 65]);
      const path = await save(pair.here, 'alice', 'report.bin', bytes);
      expect(path).toMatch(/^[0-9a-f]{32}\/report\.bin$/);
      for (const store of [pair.here, pair.there]) {
        const found = await store.lookup(path, 'alice');
        expect(found?.size).toBe(bytes.length);
        expect(await readFile(found!.path)).toEqual(bytes);
      }
    });

    it("2. attack: another owner's path, a traversal or a malformed path is not found", async () => {
      const path = await save(pair.here, 'alice', 'secret.txt', Buffer.from('alice only'));
      expect(await pair.there.lookup(path, 'mallory')).toBeNull();
      expect(await pair.there.lookup(`../${path}`, 'alice')).toBeNull();
      expect(await pair.there.lookup('0123/../../etc/passwd', 'alice')).toBeNull();
    });

    it('3. a removed file is gone on every replica', async () => {
      const path = await save(pair.here, 'bob', 'gone.txt', Buffer.from('soon gone'));
      expect(await pair.there.lookup(path, 'bob')).not.toBeNull();
      await pair.here.remove(path, 'bob');
      expect(await pair.here.lookup(path, 'bob')).toBeNull();
      expect(await pair.there.lookup(path, 'bob')).toBeNull();
    });

    it('4. the quota counts what the owner keeps, wherever it was uploaded', async () => {
      await save(pair.here, 'carol', 'a.txt', Buffer.alloc(600));
      expect(await pair.there.usage('carol')).toBe(600);
      await expect(save(pair.there, 'carol', 'b.txt', Buffer.alloc(500))).rejects.toBeInstanceOf(UploadLimitError);
      expect(await pair.there.usage('carol')).toBe(600);
      await save(pair.there, 'carol', 'c.txt', Buffer.alloc(300));
      expect(await pair.here.usage('carol')).toBe(900);
    });

    it('5. the sweep removes expired files nobody references, once, and keeps referenced ones', async () => {
      const keepMe = await save(pair.here, 'dave', 'keep.txt', Buffer.from('keep'));
      const dropMe = await save(pair.here, 'dave', 'drop.txt', Buffer.from('drop'));
      await pair.there.lookup(dropMe, 'dave'); // a copy on the other replica too
      const later = Date.now() + 60_000;
      const keep = (p: string) => p === keepMe;
      const removed = (await pair.here.sweep(1_000, keep, later)) + (await pair.there.sweep(1_000, keep, later));
      expect(removed).toBeGreaterThanOrEqual(1);
      for (const store of [pair.here, pair.there]) {
        expect(await store.lookup(dropMe, 'dave')).toBeNull();
        expect(await store.lookup(keepMe, 'dave')).not.toBeNull();
      }
    });
  });
}
