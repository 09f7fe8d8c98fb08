/** Metrics (issue 11): the process's Prometheus registry and the engine's observation of runs. @module */
export { createMetrics, processMetrics, type Metrics } from './registry.ts';
export { countedStream, observe, type RunObservation } from './observe.ts';
export { metricsSummary, V1_RUN_STATUS } from './summary.ts';
