/** Every agent tool, and the names of those that pause for approval. @module */
import { checkHealth } from './check-health.ts';
import { createTask } from './create-task.ts';
import { deployService } from './deploy-service.ts';
import { endMaintenance } from './end-maintenance.ts';
import { getDashboard } from './get-dashboard.ts';
import { getEnvironment } from './get-environment.ts';
import { listDeployments } from './list-deployments.ts';
import { listMaintenanceEvents } from './list-maintenance-events.ts';
import { searchDashboards } from './search-dashboards.ts';
import { showCapabilities } from './show-capabilities.ts';
import { startMaintenance } from './start-maintenance.ts';

export const ALL_TOOLS = [
  showCapabilities, searchDashboards, getDashboard, listMaintenanceEvents, startMaintenance, endMaintenance,
  listDeployments, deployService, checkHealth, getEnvironment, createTask,
];

/** Tools that pause for the user's approval before they act (declared in server/operations). */
export { APPROVAL_TOOLS } from '../../operations/index.ts';

export { CONTEXT_KEY, type GrantRuleRef, type GrantUse, type ToolContext } from './context.ts';
export { codeForStatus, callBackend } from './backend.ts';
export { errorContent, refusalOf } from './define.ts';
