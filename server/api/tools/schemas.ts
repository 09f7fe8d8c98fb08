/** Request schemas of the tool endpoints (/api/tools). Unknown keys are dropped. */
import { z } from 'zod';

const serviceName = z.string().trim().min(1).max(100);
const environmentName = z.string().trim().min(1).max(50);
const limit = (max: number, fallback: number) => z.coerce.number().int().min(1).max(max).default(fallback);

export const DashboardSearchQuery = z.object({
  q: z.string().trim().max(200).optional(),
  limit: limit(50, 10),
});

export const DashboardParams = z.object({ id: z.string().min(1).max(100) });

export const MaintenanceQuery = z.object({
  status: z.enum(['active', 'upcoming', 'past', 'all']).default('all'),
  service: serviceName.optional(),
});

export const StartMaintenanceBody = z.object({
  service: serviceName,
  duration_minutes: z.coerce.number().int().min(1).max(24 * 60),
  reason: z.string().trim().min(1).max(500),
});

export const EndMaintenanceBody = z.object({ service: serviceName });

export const DeploymentsQuery = z.object({
  service: serviceName.optional(),
  environment: environmentName.optional(),
  limit: limit(100, 20),
});

export const DeployBody = z.object({
  service: serviceName,
  version: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, 'letters, digits and . _ + - only'),
  environment: environmentName,
});

export const HealthQuery = z.object({ service: serviceName.optional() });

export const EnvironmentQuery = z.object({ environment: environmentName.optional() });

export const CreateTaskBody = z.object({
  title: z.string().trim().min(1).max(200),
  description: z.string().trim().max(5000).optional(),
  service: serviceName.optional(),
  priority: z.enum(['low', 'medium', 'high']).default('medium'),
});

export const TasksQuery = z.object({ limit: limit(100, 50) });
