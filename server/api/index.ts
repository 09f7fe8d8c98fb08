/** The api role (placeholder until the backend API lands). */
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/index.ts';

export interface ApiOptions {
  config: Config;
  pool: Pool;
}

export const apiRoutes: FastifyPluginAsync<ApiOptions> = async () => {};
