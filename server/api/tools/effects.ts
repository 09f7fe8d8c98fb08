/**
 * Side effects of POST tools, in one transaction, idempotent by `Idempotency-Key` (falling back to
 * `X-Tool-Call-Id`): the same key with the same arguments returns the stored result without acting
 * again; with other arguments it is 409 CONFLICT. See db/idempotency.ts for why concurrent
 * duplicates yield exactly one effect.
 * @module
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { claimIdempotencyKey, completeIdempotencyKey, getIdempotencyRecord } from '../../db/idempotency.ts';
import { withTransaction, type PoolClient } from '../../db/index.ts';
import { hashJson } from '../../canonical-json.ts';
import { AirlockError } from '../../errors.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../identity.ts';
import { markReplayed } from './hooks.ts';

function idempotencyKey(request: FastifyRequest): string | null {
  for (const name of ['idempotency-key', 'x-tool-call-id']) {
    const value = request.headers[name];
    if (typeof value === 'string' && value.trim()) {
      if (value.length > 200) {
        throw new AirlockError('VALIDATION_ERROR', `${name} is too long.`, {
          details: [{ path: name, message: 'at most 200 characters', location: 'headers' }],
        });
      }
      return value.trim();
    }
  }
  return null;
}

/**
 * Runs `effect` once per idempotency key and replies with its result and `status`.
 * @example return runEffect(ctx, request, reply, { operation: 'create_task', args: body, status: 201 }, (tx) => createTask(tx, …));
 */
export async function runEffect<T>(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  input: { operation: string; args: unknown; status: number },
  effect: (tx: PoolClient) => Promise<T>,
): Promise<unknown> {
  const key = idempotencyKey(request);
  if (!key) {
    const result = await withTransaction(ctx.pool, effect);
    reply.status(input.status);
    return result;
  }
  const userId = requestUser(request).userId;
  const requestHash = hashJson({ operation: input.operation, args: input.args });
  const outcome = await withTransaction(ctx.pool, async (tx) => {
    if (await claimIdempotencyKey(tx, { userId, key, operation: input.operation, requestHash })) {
      // Serialise through JSON now, so the live answer and a later replay are the same document.
      const response = JSON.parse(JSON.stringify(await effect(tx))) as unknown;
      await completeIdempotencyKey(tx, { userId, key, statusCode: input.status, response });
      return { replay: false, statusCode: input.status, response };
    }
    const stored = await getIdempotencyRecord(tx, { userId, key });
    if (!stored || stored.requestHash !== requestHash) {
      throw new AirlockError('CONFLICT', 'This Idempotency-Key was already used with different arguments.', {
        details: { idempotency_key: key, operation: stored?.operation },
      });
    }
    return { replay: true, statusCode: stored.statusCode, response: stored.response };
  });
  if (outcome.replay) {
    markReplayed(request);
    reply.header('idempotent-replayed', 'true');
  }
  reply.status(outcome.statusCode);
  return outcome.response;
}
