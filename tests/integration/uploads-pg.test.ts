/** The PostgreSQL upload store: the upload contract with two replicas' stores on one schema. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PgUploadStore } from '../../server/gradio/index.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { CONTRACT_LIMITS, runUploadContract } from '../helpers/upload-contract.ts';

runUploadContract('postgres', async () => {
  const db = await createTestDatabase();
  const dir = await mkdtemp(join(tmpdir(), 'airlock-pg-uploads-'));
  return {
    here: new PgUploadStore(db.pool, join(dir, 'a'), CONTRACT_LIMITS),
    there: new PgUploadStore(db.pool, join(dir, 'b'), CONTRACT_LIMITS),
    async close() {
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
});
