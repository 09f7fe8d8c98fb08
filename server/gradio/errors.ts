/**
 * The gradio area's own small errors (it does not import the app's taxonomy; callers map).
 * @module
 */

/** Base class: a stable `code` and the HTTP status/body a route answers with. */
export class GradioError extends Error {
  override name = 'GradioError';
  constructor(
    readonly code: string,
    readonly status: number,
    readonly body: unknown,
    message?: string,
  ) {
    super(message ?? (typeof body === 'object' && body && 'detail' in body ? String((body as { detail: unknown }).detail) : code));
  }
}

/** 401 in Gradio's shape; Fastify sends `body`. */
export class NotAuthenticatedError extends GradioError {
  override name = 'NotAuthenticatedError';
  constructor() {
    super('NOT_AUTHENTICATED', 401, { detail: { error: 'Not authenticated', auth_message: null } });
  }
}

/**
 * 503 for a request whose authentication could not be decided (the identity store is down):
 * unlike 401, clients keep their credentials and retry. `extra` joins the body, e.g. a code.
 */
export class ServiceUnavailableError extends GradioError {
  override name = 'ServiceUnavailableError';
  /** Seconds the `Retry-After` header asks clients to wait. */
  readonly retryAfterS: number;
  constructor(
    detail = 'Service temporarily unavailable.',
    options: { code?: string; extra?: Record<string, unknown>; retryAfterS?: number; cause?: unknown } = {},
  ) {
    super(options.code ?? 'SERVICE_UNAVAILABLE', 503, { ...options.extra, detail });
    this.retryAfterS = options.retryAfterS ?? 5;
    this.cause = options.cause;
  }
}

/**
 * 507 when the upload folder's disk (or quota) is full. Nothing of the request is kept; the request
 * itself may be fine, so it is retryable once space is freed (`Retry-After`, like a 503).
 */
export class StorageFullError extends GradioError {
  override name = 'StorageFullError';
  readonly retryAfterS = 60;
  constructor(cause?: unknown) {
    const detail = 'The server has no room to store this upload right now. Nothing was kept; try again later.';
    super('STORAGE_FULL', 507, { detail, error: { code: 'STORAGE_FULL', message: detail, retryable: true } });
    this.cause = cause;
  }
}

/** ENOSPC (disk full), EDQUOT (quota), EFBIG (file size limit): the storage, not the request. */
export function isStorageFull(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG';
}

/** 400/422/404/413/503 with a `detail` string, as Gradio answers; `parameter` names the input at fault. */
export class RequestRejectedError extends GradioError {
  override name = 'RequestRejectedError';
  constructor(
    status: number,
    detail: string,
    code = 'REQUEST_REJECTED',
    readonly parameter?: string,
  ) {
    super(code, status, { detail });
  }
}

/**
 * A 422 body for the Python client. It reads `detail` as Gradio's list of validator results: a
 * string crashes it (AttributeError on `str.get`), this list raises a ValidationError with the
 * message. The JS client shows `detail` as the message, so it keeps the string.
 */
export function pythonValidationBody(detail: string, parameter = 'data'): { detail: unknown[] } {
  return { detail: [{ __type__: 'validate', is_valid: false, message: detail, parameter_name: parameter }] };
}

/**
 * What a handler may throw to control its error completion: `title` is shown as the error's title,
 * and `expose: false` replaces the message with a generic one.
 */
export class EndpointError extends Error {
  override name = 'EndpointError';
  readonly title: string;
  readonly expose: boolean;
  /** The HTTP status of the unqueued `/run` reply (default 500, as Gradio; e.g. 400 for the caller's own mistake). */
  readonly status: number;
  constructor(message: string, options: { title?: string; expose?: boolean; cause?: unknown; status?: number } = {}) {
    super(message, { cause: options.cause });
    this.title = options.title ?? 'Error';
    this.expose = options.expose ?? true;
    this.status = options.status !== undefined && options.status >= 400 && options.status <= 599 ? options.status : 500;
  }
}

/** Whether a value is one of this area's errors (by name, surviving duplicate module copies). */
export function isGradioError(error: unknown): error is GradioError {
  return error instanceof Error && 'status' in error && 'body' in error && 'code' in error;
}
