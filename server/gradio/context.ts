/**
 * What the route modules share within one plugin instance.
 * @module
 */
import type { DirectRuns } from './direct-runs.ts';
import type { UploadStorage } from './upload-store.ts';
import type { GradioQueue } from './queue.ts';
import type { StreamHub } from './streams.ts';
import type { EndpointDefinition, GradioPluginOptions } from './types.ts';

/** Shared state of one mounted Gradio server. */
export interface GradioContext {
  options: GradioPluginOptions<any>;
  endpoints: readonly EndpointDefinition<any>[];
  queue: GradioQueue;
  /** Unqueued /run calls, admitted by the same schedulers. */
  direct: DirectRuns;
  streams: StreamHub;
  store: UploadStorage;
  appId: number;
  /** Public mount path used for `root`. */
  mountPath: string;
}
