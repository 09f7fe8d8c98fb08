/**
 * Signing the audit chain's heads (issue 36 item 3): every AUDIT_CHECKPOINT_S, and at every export
 * (before its snapshot, so the export carries a head as new as its rows), each tenant's head not yet
 * signed is signed with the checkpoint key (audit/checkpoint-key.ts: derived from the KEK, never
 * stored) and kept in audit_checkpoints; with a webhook endpoint that names `audit.checkpoint`, the
 * checkpoint also goes out through the outbox, so a copy lives outside Airlock. Every replica runs
 * it; an advisory lock makes them write one checkpoint per head.
 * @module
 */
import type { FastifyInstance } from 'fastify';
import { checkpointSigner, type CheckpointSigner } from '../../audit/checkpoint-key.ts';
import { kekSecret } from '../../auth/index.ts';
import type { Config } from '../../config.ts';
import { enqueueCheckpointEvent } from '../../db/approval-outbox.ts';
import { insertCheckpoint, lockCheckpoints, unsignedHeads, type AuditCheckpoint } from '../../db/audit-checkpoints.ts';
import { withTransaction, type Pool } from '../../db/index.ts';

/** Signs every head not signed yet, in one transaction; returns the new checkpoints. */
export function signHeads(pool: Pool, signer: CheckpointSigner, outbox: boolean): Promise<AuditCheckpoint[]> {
  return withTransaction(pool, async (tx) => {
    await lockCheckpoints(tx);
    const signed: AuditCheckpoint[] = [];
    for (const head of await unsignedHeads(tx)) {
      const jws = await signer.sign({ tenant: head.tenant, last_id: head.last_id!, hash: head.hash });
      const checkpoint = await insertCheckpoint(tx, { tenant: head.tenant, last_id: head.last_id!, hash: head.hash, jws });
      if (outbox) await enqueueCheckpointEvent(tx, checkpoint);
      signed.push(checkpoint);
    }
    return signed;
  });
}

export interface AuditCheckpoints {
  signer: CheckpointSigner;
  /** Signs the unsigned heads now (an export asks first). */
  signNow(): Promise<AuditCheckpoint[]>;
}

/** The api role's checkpoints: the key, derived once; a round every `config.auditCheckpointS`. */
export async function startAuditCheckpoints(app: FastifyInstance, o: { config: Config; pool: Pool; outbox: boolean }): Promise<AuditCheckpoints> {
  const signer = await checkpointSigner(kekSecret(o.config)!);
  const signNow = () => signHeads(o.pool, signer, o.outbox);
  const timer = setInterval(() => {
    signNow().catch((err) => app.log.warn({ err }, 'the audit chain heads could not be signed this round'));
  }, o.config.auditCheckpointS * 1000);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
  return { signer, signNow };
}
