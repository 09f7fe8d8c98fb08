import { describe, expect, it } from 'vitest';
import { parseIntent } from '../../../../../server/agent/offline-model/intents.ts';

describe('parseIntent', () => {
  const table: Array<[string, string | null, Record<string, string | number>?]> = [
    ['search dashboards for latency', 'search_dashboards', { query: 'latency' }],
    ['show me the error rate dashboards', 'search_dashboards', { query: 'error rate' }],
    ['find dashboards about checkout', 'search_dashboards', { query: 'checkout' }],
    ["what's the health of payments-api", 'check_health', { service: 'payments-api' }],
    ['is payments-api healthy?', 'check_health', { service: 'payments-api' }],
    ['check health of all services', 'check_health', {}],
    ['start maintenance on db-primary for 30 minutes because of a disk upgrade', 'start_maintenance', { service: 'db-primary', duration_minutes: 30, reason: 'disk upgrade' }],
    ['put cache-redis into maintenance for 2 hours due to a memory upgrade', 'start_maintenance', { service: 'cache-redis', duration_minutes: 120, reason: 'memory upgrade' }],
    ['start maintenance on db-primary', 'start_maintenance', { service: 'db-primary' }],
    ['end the maintenance on db-primary', 'end_maintenance', { service: 'db-primary' }],
    ['stop maintenance for db-primary', 'end_maintenance', { service: 'db-primary' }],
    ['list maintenance events', 'list_maintenance_events', {}],
    ['show upcoming maintenance for db-primary', 'list_maintenance_events', { status: 'upcoming', service: 'db-primary' }],
    ['any active maintenance?', 'list_maintenance_events', { status: 'active' }],
    ['deploy checkout-api 2.4.1 to staging', 'deploy_service', { service: 'checkout-api', version: '2.4.1', environment: 'staging' }],
    ['roll out v3.0.0 of payments-api to prod', 'deploy_service', { service: 'payments-api', version: '3.0.0', environment: 'production' }],
    ['deploy checkout-api', 'deploy_service', { service: 'checkout-api' }],
    ['list deployments', 'list_deployments', {}],
    ['show recent deployments of checkout-api in staging', 'list_deployments', { service: 'checkout-api', environment: 'staging' }],
    ['tell me about the staging environment', 'get_environment', { environment: 'staging' }],
    ['list environments', 'get_environment', {}],
    ['describe the development environment', 'get_environment', { environment: 'dev' }],
    ['create a task to rotate the db-primary credentials', 'create_task', { title: 'rotate the db-primary credentials', service: 'db-primary' }],
    ['open a high priority ticket: "Investigate payments-api latency"', 'create_task', { title: 'Investigate payments-api latency', priority: 'high', service: 'payments-api' }],
    ['get dashboard dash-latency', 'get_dashboard', { id: 'dash-latency' }],
    ['open dashboard 42', 'get_dashboard', { id: '42' }],
    ['what can you do?', 'show_capabilities', {}],
    ['help', 'show_capabilities', {}],
    ['hello', null],
    ['tell me a joke', null],
  ];
  it.each(table)('%s', (text, tool, args) => {
    const intent = parseIntent(text);
    if (tool === null) expect(intent).toBeNull();
    else expect(intent).toEqual({ tool, args });
  });
});
