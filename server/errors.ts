/**
 * The error taxonomy: one list of codes for the REST API, the Gradio stream and the UI.
 * A leaf module (imports nothing of ours), like config.ts.
 * @module
 */

/** Every error code a client may see, with its HTTP status and whether retrying can help. */
export const ERROR_CODES = {
  UNAUTHORIZED: { status: 401, retryable: false, message: 'Authentication is required or has expired.' },
  FORBIDDEN: { status: 403, retryable: false, message: 'You are not allowed to do this.' },
  LLM_UNAVAILABLE: { status: 503, retryable: true, message: 'The language model is unavailable. Try again shortly.' },
  GRADIO_UNREACHABLE: { status: 503, retryable: true, message: 'The assistant gateway cannot be reached.' },
  TOOL_FAILURE: { status: 502, retryable: true, message: 'A tool failed to run.' },
  CONVERSATION_BUSY: { status: 409, retryable: true, message: 'This conversation is busy in another tab or window.' },
  APPROVAL_EXPIRED: { status: 410, retryable: false, message: 'The approval has expired.' },
  APPROVAL_NOT_FOUND: { status: 404, retryable: false, message: 'There is no pending approval for this conversation.' },
  VALIDATION_ERROR: { status: 400, retryable: false, message: 'The request is not valid.' },
  NOT_FOUND: { status: 404, retryable: false, message: 'Not found.' },
  CONFLICT: { status: 409, retryable: false, message: 'The request conflicts with the current state.' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, message: 'The request body is too large.' },
  RATE_LIMITED: { status: 429, retryable: true, message: 'Too many attempts. Wait a moment and try again.' },
  INTERNAL: { status: 500, retryable: true, message: 'Something went wrong on our side.' },
  // Infrastructure (the database) is down or overloaded: the request may be fine and the session
  // valid, so clients keep their session and retry; never reported as UNAUTHORIZED.
  SERVICE_UNAVAILABLE: { status: 503, retryable: true, message: 'The service is temporarily unavailable. Try again shortly.' },
  // The upload folder's disk is full: nothing of the upload was kept, and retrying later can work.
  STORAGE_FULL: { status: 507, retryable: true, message: 'The server has no room to store this upload right now. Try again later.' },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

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

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
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
