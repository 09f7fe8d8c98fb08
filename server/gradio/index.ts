/**
 * Public API of `server/gradio`: a generic Gradio queue protocol (sse_v3) server. Knows nothing
 * of agents; other areas import only this file.
 * @module
 */
export { gradioPlugin } from './plugin.ts';
export type {
  Authenticate,
  ComponentSpec,
  DiffOp,
  EndpointDefinition,
  EndpointRequest,
  EndpointResult,
  ErrorOutput,
  GradioPluginOptions,
  JsonSchema,
  LogLevel,
  McpElicitation,
  ProgressUnit,
  RequestHeaders,
  ServerMessage,
} from './types.ts';
export {
  EndpointError,
  GradioError,
  NotAuthenticatedError,
  RequestRejectedError,
  ServiceUnavailableError,
  isGradioError,
} from './errors.ts';
export { applyOps, diff, snapshot } from './diff.ts';
export { encodeFrame } from './encode.ts';
export { lookupStoredFile, resolveStoredPath, safeBasename } from './files.ts';
export { buildConfig, GRADIO_VERSION } from './config-builder.ts';
export { buildInfo } from './info.ts';
export { computeRoot } from './root-url.ts';
export { createMemorySessionBus, type BusMessage, type SessionBus, type SessionSink, type Attachment } from './session-bus.ts';
export { PgUploadStore } from './pg-upload-store.ts';
export { UploadStore, type UploadStorage } from './upload-store.ts';
export { fetchUrlToUploads, FileUrlError, isHttpUrl, type FetchedFile, type UrlFetchOptions } from './url-fetch.ts';
export { addressAllowed, allowList } from './url-address.ts';
export { PgSessionBus, INLINE_MAX, batchOps, orphanCompletion, type PgBusOptions, type PgBusStats } from './bus/pg-bus.ts';
