/**
 * The error taxonomy as the UI shows it: every code's human text and whether Retry can help
 * (mirrors `server/errors.ts`, which the browser bundle must not import).
 * @module
 */

const TEXT: Record<string, { text: string; retryable: boolean }> = {
  UNAUTHORIZED: { text: 'Your session has ended. Sign in again to continue.', retryable: false },
  FORBIDDEN: { text: 'Your role does not allow this action.', retryable: false },
  LLM_UNAVAILABLE: { text: 'The language model is unavailable right now. Try again in a moment.', retryable: true },
  GRADIO_UNREACHABLE: { text: 'The assistant cannot be reached. Check your connection and try again.', retryable: true },
  TOOL_FAILURE: { text: 'A tool failed to run.', retryable: true },
  CONVERSATION_BUSY: { text: 'This conversation is busy in another tab or window.', retryable: true },
  APPROVAL_EXPIRED: { text: 'The approval expired before it was answered. Nothing was run.', retryable: false },
  APPROVAL_NOT_FOUND: { text: 'There is no pending approval to answer any more.', retryable: false },
  VALIDATION_ERROR: { text: 'The request was not valid.', retryable: false },
  NOT_FOUND: { text: 'Not found. It may have been deleted.', retryable: false },
  CONFLICT: { text: 'That conflicts with the current state.', retryable: false },
  PAYLOAD_TOO_LARGE: { text: 'That file or message is too large.', retryable: false },
  RATE_LIMITED: { text: 'Too many attempts. Wait a moment and try again.', retryable: true },
  INTERNAL: { text: 'Something went wrong on our side.', retryable: true },
  SERVICE_UNAVAILABLE: { text: 'The service is temporarily unavailable. You are still signed in; try again in a moment.', retryable: true },
  STORAGE_FULL: { text: 'The server has no room for this file right now. Nothing was kept; try again later.', retryable: true },
};

/** The sentence users see for a code; unknown codes read as INTERNAL. */
export function errorText(code: string): string {
  return (TEXT[code] ?? TEXT.INTERNAL).text;
}

/** Whether the taxonomy says retrying can help. */
export function isRetryable(code: string): boolean {
  return (TEXT[code] ?? TEXT.INTERNAL).retryable;
}

/** A code from the taxonomy, or INTERNAL for anything else. */
export function toErrorCode(value: unknown): string {
  return typeof value === 'string' && Object.hasOwn(TEXT, value) ? value : 'INTERNAL';
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
