/** The gateway role (placeholder until /chat lands). */
import type { FastifyPluginAsync } from 'fastify';
import type { Config } from '../config.ts';
import type { Pool } from '../db/index.ts';

export interface GatewayOptions {
  config: Config;
  pool: Pool;
  databaseUrl: string;
  apiUrl: () => string;
}

export const gatewayRoutes: FastifyPluginAsync<GatewayOptions> = async () => {};
