/**
 * The error taxonomy as the UI shows it: every code's sentence for people and whether Retry can
 * help, from the one table the server uses too (src/lib/wire/errors.ts).
 * @module
 */
import { ERROR_CODES, toErrorCode } from '../wire/index.ts';

export { toErrorCode };

/** The sentence users see for a code; unknown codes read as INTERNAL. */
export function errorText(code: string): string {
  return ERROR_CODES[toErrorCode(code)].userText;
}

/** What a refused tool's card says, and what a screen reader hears. */
export const NOT_ALLOWED = 'Not allowed for your role';

/**
 * Whether a tool's failure is a refusal of the user's role (the call was never run): its card says
 * so, once, and the step's error that comes with it adds no card of its own (issue 29 item 7).
 */
export function isRefusal(code: unknown): boolean {
  return code === 'FORBIDDEN' || code === 'UNAUTHORIZED';
}

/** Whether the taxonomy says retrying can help. */
export function isRetryable(code: string): boolean {
  return ERROR_CODES[toErrorCode(code)].retryable;
}

/** A failed REST or transport call, carrying a taxonomy code. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly code: string;
  readonly status: number;
  readonly details?: unknown;
  constructor(code: string, message: string, status = 0, details?: unknown) {
    super(message);
    this.code = code;
    this.status = status;
    this.details = details;
  }
}

/** Matches by name so it survives duplicate module copies. */
export function isApiError(error: unknown): error is ApiError {
  return error instanceof Error && error.name === 'ApiError' && 'code' in error;
}
