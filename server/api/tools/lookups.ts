/** NOT_FOUND checks for names a tool query refers to. */
import { getEnvironment } from '../../db/environments.ts';
import type { Queryable } from '../../db/index.ts';
import { serviceExists } from '../../db/services.ts';
import { AirlockError } from '../../errors.ts';

export async function assertServiceExists(q: Queryable, service: string | undefined): Promise<void> {
  if (service !== undefined && !(await serviceExists(q, service))) {
    throw new AirlockError('NOT_FOUND', `Unknown service "${service}".`, { details: { service } });
  }
}

export async function assertEnvironmentExists(q: Queryable, environment: string | undefined): Promise<void> {
  if (environment !== undefined && !(await getEnvironment(q, environment))) {
    throw new AirlockError('NOT_FOUND', `Unknown environment "${environment}".`, { details: { environment } });
  }
}
