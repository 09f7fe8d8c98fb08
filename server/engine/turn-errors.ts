/**
 * How a run ends when it does not end well: the abort reasons (Stop or shutdown), and the
 * taxonomy error a failed turn reports.
 * @module
 */
import { isDatabaseUnavailable } from '../db/index.ts';
import { AirlockError, isAirlockError } from '../errors.ts';
import { errorFieldsOf, type ErrorField } from '../../src/lib/wire/index.ts';

/** Why a run was aborted: Stop by a user, or the process shutting down. */
export class TurnAbort extends Error {
  override readonly name = 'TurnAbort';
  constructor(readonly reason: 'cancelled' | 'shutdown') {
    super(reason === 'shutdown' ? 'The server is shutting down.' : 'Stopped by the user.');
  }
}

/** The taxonomy error a turn ends with: expected ones as they are, an outage retryable, the rest INTERNAL. */
export function toTurnError(error: unknown, runId: string): AirlockError {
  if (isAirlockError(error)) return error;
  if (isDatabaseUnavailable(error)) return new AirlockError('SERVICE_UNAVAILABLE', undefined, { cause: error });
  return new AirlockError('INTERNAL', `Something went wrong on our side (reference ${runId}).`, { cause: error });
}

/** The arguments an error is about (`details.fields` of a VALIDATION_ERROR: an edited confirm's), else none. */
export function errorFields(error: AirlockError): ErrorField[] {
  return errorFieldsOf((error.details as { fields?: unknown } | undefined)?.fields);
}
