/** Metrics (issue 11): the process's Prometheus registry and the summary the ops route reads (the engine observes its runs in engine/observe.ts). @module */
export { createMetrics, processMetrics, type Metrics } from './registry.ts';
export { metricsSummary, V1_RUN_STATUS } from './summary.ts';
