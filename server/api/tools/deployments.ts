/** list_deployments, deploy_service. */
import type { FastifyPluginAsync } from 'fastify';
import { createDeployment, listDeployments } from '../../db/deployments.ts';
import type { ApiContext } from '../context.ts';
import { requestUser } from '../identity.ts';
import { parseInput } from '../../http/validate.ts';
import { runEffect } from './effects.ts';
import { assertEnvironmentExists, assertServiceExists } from './lookups.ts';
import { toolRoute } from './route-config.ts';
import { DeployBody, DeploymentsQuery } from './schemas.ts';
import { deploymentJson } from './serialize.ts';

export const deploymentTools: FastifyPluginAsync<{ ctx: ApiContext }> = async (app, { ctx }) => {
  app.get('/deployments', toolRoute('list_deployments'), async (request) => {
    const query = parseInput(DeploymentsQuery, request.query, 'query');
    await assertServiceExists(ctx.pool, query.service);
    await assertEnvironmentExists(ctx.pool, query.environment);
    const items = await listDeployments(ctx.pool, query);
    return { count: items.length, items: items.map(deploymentJson) };
  });

  app.post('/deployments', toolRoute('deploy_service'), async (request, reply) => {
    const body = parseInput(DeployBody, request.body, 'body');
    const user = requestUser(request);
    return runEffect(ctx, request, reply, { operation: 'deploy_service', args: body, status: 201 }, async (tx) =>
      deploymentJson(await createDeployment(tx, { ...body, deployedBy: user.username })),
    );
  });
};
