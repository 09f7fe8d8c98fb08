import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UploadStore } from '../../../../server/gradio/upload-store.ts';
import { CONTRACT_LIMITS, runUploadContract } from '../../../helpers/upload-contract.ts';

runUploadContract('disk', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-uploads-'));
  const store = new UploadStore(dir, CONTRACT_LIMITS);
  return { here: store, there: store, close: () => rm(dir, { recursive: true, force: true }) };
});
