/** Request schemas of /api/auth. */
import { z } from 'zod';

export const LoginBody = z.object({
  username: z.string().trim().min(1).max(64),
  password: z.string().min(1).max(1024),
  /** Browser sign-in: also start a cookie session and return a short-lived access token (issue 8). */
  cookie: z.boolean().optional(),
});

export const ServiceTokenBody = z.object({
  client_id: z.string().min(1).max(200),
  client_secret: z.string().min(1).max(1024),
});
