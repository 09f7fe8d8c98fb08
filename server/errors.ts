/**
 * The error taxonomy on the server: `AirlockError` and the REST error body, over the one table
 * of codes the UI shares (src/lib/wire/errors.ts). A leaf (imports only that table), like config.ts.
 * @module
 */
import { ERROR_CODES, type ErrorCode } from '../src/lib/wire/errors.ts';

export { ERROR_CODES, isErrorCode, type ErrorCode } from '../src/lib/wire/errors.ts';

export interface AirlockErrorOptions {
  details?: unknown;
  cause?: unknown;
}

/** An expected error: its message is safe to show to users. */
export class AirlockError extends Error {
  override readonly name = 'AirlockError';
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string = ERROR_CODES[code].message, options: AirlockErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.retryable = ERROR_CODES[code].retryable;
    this.details = options.details;
  }
}

/** Matches by name, so it survives duplicate module copies (as LangGraph's guards do). */
export function isAirlockError(error: unknown): error is AirlockError {
  return error instanceof Error && error.name === 'AirlockError' && 'code' in error;
}

/** The JSON body every REST error uses. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: unknown };
}

export function toErrorBody(error: AirlockError): ErrorBody {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details === undefined ? {} : { details: error.details }),
    },
  };
}
